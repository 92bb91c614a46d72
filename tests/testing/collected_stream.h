// collect_stream: reads a request's events to the end and gathers them (the
// tokens, text and logprobs of every delta, the terminal frame, how many terminal
// frames came), optionally cancelling after the n-th delta like a client
// that hangs up. For engine and server tests.
// Threading: the caller's thread. Never linked into apps/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace met::testing {

struct CollectedStream {
  std::vector<TokenId> tokens;
  std::string text;
  std::vector<TokenLogprob> logprobs;
  std::vector<TokenLogprob> prompt_logprobs;
  std::optional<FinishEvent> finish;
  std::optional<std::string> error;
  int num_terminal = 0;
};

inline CollectedStream collect_stream(RequestHandle& h, int cancel_after_deltas = -1) {
  CollectedStream o;
  StreamEvent e;
  int deltas = 0;
  while (h.next(e)) {
    if (auto* d = std::get_if<DeltaEvent>(&e)) {
      o.tokens.insert(o.tokens.end(), d->tokens.begin(), d->tokens.end());
      o.text += d->text;
      o.logprobs.insert(o.logprobs.end(), d->logprobs.begin(), d->logprobs.end());
      o.prompt_logprobs.insert(o.prompt_logprobs.end(), d->prompt_logprobs.begin(), d->prompt_logprobs.end());
      if (++deltas == cancel_after_deltas) h.cancel();
    } else if (auto* f = std::get_if<FinishEvent>(&e)) {
      o.finish = *f;
      ++o.num_terminal;
    } else {
      o.error = std::get<ErrorEvent>(e).message;
      ++o.num_terminal;
    }
  }
  return o;
}

}  // namespace met::testing
