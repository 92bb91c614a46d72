// ToolCallIds: makes the ids of parsed tool calls, "call_" followed by 24
// letters and digits drawn from a caller-supplied seed and a counter, so a
// request's ids are reproducible from its seed and distinct within it.
// Invariants: the n-th id depends only on (seed, n); no global state.
// Threading: one owner (the request's parser). Tested by tests/chat/tool_call_ids_test.cc.
#pragma once

#include <cstdint>
#include <string>

namespace met {

class ToolCallIds {
 public:
  explicit ToolCallIds(uint64_t seed) : seed_(seed) {}

  std::string next();

 private:
  uint64_t seed_;
  uint64_t count_ = 0;
};

}  // namespace met
