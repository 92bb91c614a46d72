// ChoiceStreams: the RequestHandles of one HTTP request's n choices (each
// choice is its own engine request), read as one queue of (choice, event)
// on the connection's strand. No thread waits for them: each handle's waker
// (run by the engine thread when it publishes) calls `wake`, which posts to
// the strand.
// Invariants: events of one choice come out in the engine's order, each
// shown to `observe` as it is taken; once the destructor returns no `wake`
// runs again (a wake already posted may still be queued on the strand).
// Threading: construction, take, has_events, cancel and the destructor on
// the session's strand; `wake` on the engine thread. Tested by
// tests/server/choice_streams_test.cc and through `met serve`.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "engine/engine.h"

namespace met {

struct ChoiceEvent {
  size_t index = 0;
  StreamEvent event;
};

class ChoiceStreams {
 public:
  // `wake` must be cheap and must not block; observe(i, event) sees choice
  // i's events as take() hands them out.
  ChoiceStreams(std::vector<RequestHandle> handles, const std::function<void()>& wake,
                std::function<void(size_t, const StreamEvent&)> observe);
  ~ChoiceStreams();
  ChoiceStreams(const ChoiceStreams&) = delete;
  ChoiceStreams& operator=(const ChoiceStreams&) = delete;

  size_t size() const { return handles_.size(); }
  bool has_events();
  std::vector<ChoiceEvent> take();
  void cancel();

 private:
  std::vector<RequestHandle> handles_;
  std::function<void(size_t, const StreamEvent&)> observe_;
  std::vector<StreamEvent> scratch_;
};

}  // namespace met
