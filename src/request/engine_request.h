// EngineRequest: what a client (HTTP handler, `met run`, `met bench`) asks the
// engine for, already validated for form and tokenized. The scheduler checks
// what only it can (the prompt against the context and the KV pool).
// Threading: plain data, moved from the client thread through the inbox.
// Tested through tests/scheduler/scheduler_test.cc and tests/engine/engine_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/ids.h"
#include "core/pooling.h"
#include "grammar/grammar.h"
#include "request/thinking_config.h"
#include "sampling/sampler.h"

namespace met {

struct LoraAdapter;  // backend/lora_adapter.h

// The most drafts one verify step checks per sequence (scheduler/speculation.h).
inline constexpr int32_t kMaxDraftTokens = 32;

struct EngineRequest {
  std::vector<TokenId> prompt;
  SamplingParams sampling;
  int32_t max_tokens = 256;            // output budget
  int32_t min_tokens = 0;              // EOS and stop ids are suppressed until reached
  std::vector<TokenId> stop_token_ids; // end the output like EOS
  std::vector<std::string> stop_strings;
  bool ignore_eos = false;
  std::optional<Duration> timeout;     // from submission; "timeout" when it passes
  std::string cache_salt;              // prefix-cache hits stay within one salt
  // Who the request is accounted to in telemetry and per-tenant metrics and
  // quotas ("": nobody in particular); the server sets it.
  std::string tenant;
  uint64_t adapter_id = 0;             // 0: the base model
  // The LoRA adapter the request runs with (adapter_id names it; null: the
  // base model). Held by the request until it ends, so unloading the
  // adapter never changes a request that was accepted with it.
  std::shared_ptr<const LoraAdapter> adapter;
  // Logprobs of each output token with this many alternatives (0 to
  // kMaxTopLogprobs); nullopt: none. Defined before any sampler step
  // (sampling/logprobs.h).
  std::optional<int32_t> logprobs;
  // vLLM's prompt_logprobs: the logprob of every prompt token after the first
  // given the tokens before it, with this many alternatives; sent with the
  // first delta. Such a request bypasses the prefix cache until they are
  // computed (every prompt position is evaluated, none is reused).
  std::optional<int32_t> prompt_logprobs;
  // Reasoning models: the think markers, where the output starts, budgets.
  std::optional<ThinkingConfig> thinking;
  // Structured output: every token outside thinking follows this grammar
  // (EOS only where it may end). Shared because it is immutable and the n
  // choices of one request use the same one.
  std::shared_ptr<const Grammar> grammar;
  // The token that closes a turn's tool calls: sampling it ends the output
  // with "tool_calls" (its text is kept: the parser needs it).
  std::optional<TokenId> tool_call_end_token;
  // OpenAI's Predicted Outputs: tokens the output is expected to largely
  // repeat (an edit of a known text). A greedy request verifies them as
  // drafts (scheduler/speculation.h), with the output unchanged; the finish
  // frame's usage counts them (spec/prediction.h). Empty: none.
  std::vector<TokenId> prediction;
  // The most drafts a step verifies for this request, from any source (its
  // prediction included), in [0, kMaxDraftTokens]: 0 turns speculation off
  // for it ("speculative": false); nullopt: the server's settings.
  std::optional<int32_t> max_draft_tokens;
  // Control tokens' text is part of the output (the chat output parsers need
  // markers such as <|channel|> that vocabularies keep as control tokens).
  // EOS and stop ids still end the output without text.
  bool render_special_tokens = false;
  // A grammar that starts when `trigger` is sampled outside thinking, holds
  // until it is complete, then lets the text run free again (tool calls
  // whose arguments are strict, under tool_choice "auto").
  struct TriggeredGrammar {
    TokenId trigger = 0;
    std::shared_ptr<const Grammar> grammar;
  };
  std::optional<TriggeredGrammar> triggered_grammar;
  // The request field `grammar` came from ("grammar", "response_format",
  // "tools"): a grammar that cannot be followed (too ambiguous, too costly,
  // a dead end) fails the request mid-way with a 400 naming it (a triggered
  // grammar's is "tools").
  std::string grammar_field = "grammar";
  // Embeddings: the request asks for its prompt's final hidden states pooled
  // this way (FinishEvent::embedding) and generates nothing: max_tokens and
  // the output's fields are ignored. REQUIRES: not Pooling::kNone.
  std::optional<Pooling> embed;
};

}  // namespace met
