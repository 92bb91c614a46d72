// validate_request. Tested by tests/request/request_limits_test.cc.
#include "request/request_limits.h"

#include <algorithm>

#include "kv/kv_block.h"
#include "sampling/logprobs.h"

namespace met {

namespace {

// An embedding request: no output, so the whole context (and the KV a
// prompt needs, less the output's slot) is the input's.
Status validate_embed_request(const EngineRequest& r, const RequestLimits& limits) {
  if (*r.embed == Pooling::kNone) return invalid_argument("pooling 'none' gives no single vector per input");
  if (r.adapter != nullptr) return invalid_argument("embeddings run the base model; the request names an adapter");
  const auto n = static_cast<int64_t>(r.prompt.size());
  if (limits.max_whole_prompt > 0 && n > limits.max_whole_prompt) {
    return invalid_argument("the input has {} tokens; this encoder reads each input whole in one step of at most {} "
                            "(raise --max-batch-tokens)",
                            n, limits.max_whole_prompt);
  }
  if (limits.max_seq_len > 0 && n > limits.max_seq_len) {
    return invalid_argument("the input has {} tokens; the context is {}", n, limits.max_seq_len);
  }
  if (prompt_kv_blocks(n - 1, limits) > limits.num_kv_blocks) {
    return invalid_argument(
        "the input needs {} KV blocks of {} tokens; the pool has {} (raise --kv-mem or --kv-blocks)",
        prompt_kv_blocks(n - 1, limits), kKvBlockTokens, limits.num_kv_blocks);
  }
  return ok_status();
}

}  // namespace

Status validate_request(const EngineRequest& r, const RequestLimits& limits) {
  if (r.prompt.empty()) return invalid_argument("the prompt is empty");
  for (size_t i = 0; i < r.prompt.size(); ++i) {
    if (r.prompt[i] < 0 || r.prompt[i] >= limits.vocab_size) {
      return invalid_argument("prompt token {} is {}, outside the vocabulary of {}", i, r.prompt[i],
                              limits.vocab_size);
    }
  }
  if (r.embed.has_value()) return validate_embed_request(r, limits);
  if (!limits.has_head) {
    return invalid_argument("this model is an encoder without a head: it gives embeddings, not text");
  }
  if (r.max_tokens < 0) return invalid_argument("max_tokens must be >= 0, got {}", r.max_tokens);
  if (r.min_tokens < 0 || r.min_tokens > r.max_tokens) {
    return invalid_argument("min_tokens must be between 0 and max_tokens ({}), got {}", r.max_tokens,
                            r.min_tokens);
  }
  MET_RETURN_IF_ERROR(validate_sampling(r.sampling));
  if (r.logprobs.has_value() && (*r.logprobs < 0 || *r.logprobs > kMaxTopLogprobs)) {
    return invalid_argument("logprobs must be between 0 and {}, got {}", kMaxTopLogprobs, *r.logprobs);
  }
  if (r.prompt_logprobs.has_value() && (*r.prompt_logprobs < 0 || *r.prompt_logprobs > kMaxTopLogprobs)) {
    return invalid_argument("prompt_logprobs must be between 0 and {}, got {}", kMaxTopLogprobs, *r.prompt_logprobs);
  }
  if (r.max_draft_tokens.has_value() && (*r.max_draft_tokens < 0 || *r.max_draft_tokens > kMaxDraftTokens)) {
    return invalid_argument("max_draft_tokens must be between 0 and {}, got {}", kMaxDraftTokens, *r.max_draft_tokens);
  }
  if (r.timeout.has_value() && r.timeout->count() <= 0) return invalid_argument("the timeout must be positive");
  if (r.adapter != nullptr && limits.num_adapter_slots == 0) {
    return invalid_argument("the request asks for a LoRA adapter; this engine runs none");
  }
  // The id salts the prefix cache: an adapter under the base model's id 0
  // would share its cached blocks.
  if ((r.adapter != nullptr) != (r.adapter_id != 0)) {
    return invalid_argument("adapter_id {} does not match the request's adapter ({})", r.adapter_id,
                            r.adapter != nullptr ? "given" : "none");
  }
  const auto n = static_cast<int64_t>(r.prompt.size());
  if (!prompt_exceeds_context(n, limits)) return ok_status();
  if (limits.max_seq_len > 0 && n >= limits.max_seq_len) {
    return invalid_argument("the prompt has {} tokens; the context is {} and must leave room for one output token",
                            n, limits.max_seq_len);
  }
  if (prompt_kv_blocks(n, limits) > limits.num_kv_blocks) {
    return invalid_argument("the prompt needs {} KV blocks of {} tokens; the pool has {} (raise --kv-mem or --kv-blocks)",
                            prompt_kv_blocks(n, limits), kKvBlockTokens, limits.num_kv_blocks);
  }
  return ok_status();
}

int32_t prompt_kv_blocks(int64_t num_tokens, const RequestLimits& limits) {
  const int32_t all = blocks_for_tokens(num_tokens + 1);
  return limits.kv_window > 0 ? std::min(all, window_min_blocks(limits.kv_window)) : all;
}

bool prompt_exceeds_context(int64_t num_tokens, const RequestLimits& limits) {
  return (limits.max_seq_len > 0 && num_tokens >= limits.max_seq_len) ||
         prompt_kv_blocks(num_tokens, limits) > limits.num_kv_blocks;
}

}  // namespace met
