// run_reference: one request alone through the simplest loop there is: the
// whole prompt in one step (chunked only by the device's row limit), then one
// token per step, sampled on the host from the logits with the request's own
// sampler, guards checked in the obvious order. The scheduler's lanes are
// checked against it (STYLE.md rule 15). Deadlines and cancellation are not
// modelled: compare only requests without them.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <string>
#include <vector>

#include "backend/device.h"
#include "request/engine_request.h"
#include "tokenizer/tokenizer.h"

namespace met::testing {

struct ReferenceOutcome {
  std::vector<TokenId> tokens;
  std::string text;
  std::string finish_reason;
};

// Uses blocks 0.. of `device`'s pool. `max_seq_len` 0: the device's context.
ReferenceOutcome run_reference(Device& device, const Tokenizer& tokenizer, const EngineRequest& request,
                               int32_t max_seq_len = 0);

}  // namespace met::testing
