// Logprobs in OpenAI's two response shapes. The values are the model's
// log-softmax before any sampler step (sampling/logprobs.h); a token banned
// to -inf is written as -9999.0, as OpenAI and vLLM do, since JSON has no
// infinity.
//   chat:        {"content": [{"token", "logprob", "bytes", "top_logprobs":
//                 [{"token", "logprob", "bytes"}]}]}
//   completions: {"tokens", "token_logprobs", "top_logprobs": [{token:
//                 logprob}], "text_offset"}; each top_logprobs map also holds
//                 the sampled token (so up to logprobs + 1 entries, as
//                 OpenAI documents); text_offset counts code points from the
//                 start of the completion text.
//   prompt (vLLM's prompt_logprobs): [null, {"<id>": {"logprob", "rank",
//                 "decoded_token"}}, ...]: null for the first prompt token,
//                 then per token a map holding it and its alternatives.
// A token's "token" is its bytes as text (invalid UTF-8 written as U+FFFD by
// the JSON writer); "bytes" are the exact bytes.
// Threading: pure functions. Tested by tests/server/logprobs_json_test.cc.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

#include "sampling/logprobs.h"
#include "tokenizer/tokenizer.h"

namespace met {

// The "logprobs" object of a chat choice or chunk.
nlohmann::ordered_json chat_logprobs_json(std::span<const TokenLogprob> entries, const Tokenizer& tokenizer);

// The "logprobs" object of a completion choice or chunk; `text_offset` is
// where the first entry's text starts and is advanced past the entries.
nlohmann::ordered_json completion_logprobs_json(std::span<const TokenLogprob> entries, const Tokenizer& tokenizer,
                                                size_t& text_offset);

// vLLM's "prompt_logprobs" of a choice over the entries for prompt tokens
// 1..n-1.
nlohmann::ordered_json prompt_logprobs_json(std::span<const TokenLogprob> entries, const Tokenizer& tokenizer);

}  // namespace met
