// RequestLimits and validate_request: what a request is checked against
// before it is queued (the vocabulary, the served context, the KV pool), so
// a request that can never run is refused at once with a message saying what
// and by how much. Checked once, by Engine::submit on the client's thread;
// Scheduler::enqueue requires it.
// Threading: pure. Tested by tests/request/request_limits_test.cc.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "kv/kv_block.h"
#include "request/engine_request.h"

namespace met {

struct RequestLimits {
  int32_t vocab_size = 0;
  int32_t max_seq_len = 0;
  int32_t num_kv_blocks = 0;
  // DeviceInfo::kv_window when the scheduler gives back the blocks behind
  // it (0: a sequence keeps all its blocks).
  int32_t kv_window = 0;
  // DeviceInfo::num_adapter_slots: 0 refuses a request with an adapter.
  int32_t num_adapter_slots = 0;
  // DeviceInfo::has_head: false (an encoder) refuses generation.
  bool has_head = true;
  // A model without causal attention runs each input whole in one step:
  // the most tokens one holds (0: a causal model, no such bound).
  int32_t max_whole_prompt = 0;

  // Token positions the whole KV pool holds.
  int64_t kv_capacity_tokens() const { return int64_t{num_kv_blocks} * kKvBlockTokens; }
};

// KV blocks a prompt of `num_tokens` needs at once to be served (with room
// for one output token): all of its positions' blocks, or with a window no
// more than the window needs (window_min_blocks).
int32_t prompt_kv_blocks(int64_t num_tokens, const RequestLimits& limits);

Status validate_request(const EngineRequest& r, const RequestLimits& limits);

// Whether a prompt of `num_tokens` is too long to serve: it leaves no room
// for one output token in the context, or needs more KV blocks at once than
// the pool has (validate_request refuses it; clients call this the context
// length being exceeded).
bool prompt_exceeds_context(int64_t num_tokens, const RequestLimits& limits);

}  // namespace met
