// Prompt lookup: n-gram drafting from the sequence's own tokens (vLLM's
// `ngram` speculator, llama.cpp's lookup). The last n tokens of the history
// (prompt then output) are looked for earlier in the history; the tokens that
// followed that earlier occurrence are the drafts.
// Rule, as vLLM's NgramProposer (_find_longest_matched_ngram_and_propose_tokens):
//  - the match length is the longest n <= max_n for which the last n tokens
//    occur earlier, ending before the last token (so at least one token
//    follows the occurrence); occurrences may overlap the suffix itself;
//  - a match shorter than min_n is no match, and proposes nothing;
//  - among occurrences of that longest length, the EARLIEST in the history
//    wins (vLLM scans the reversed tokens and keeps the last tie);
//  - the drafts are the up to max_draft tokens after it, cut at the end of
//    the history (never past it).
// The n-gram bounds default to vLLM's when neither is given (min = max = 5,
// which its code calls arbitrary); max_draft is vLLM's num_speculative_tokens,
// which has no default there (5 here is ours). Capping the drafts at the
// context limit is the caller's job (vLLM caps them at max_model_len).
// Cost: one pass over the history comparing the last token; only where that
// matches are up to max_n tokens compared, so O(history) in practice and
// O(history * max_n) at worst; it stops at the first occurrence of length
// max_n. About 10 us for a 32k history of random tokens (18 us as two spans)
// on one core of the development machine.
// No allocation once `drafts` has capacity for max_draft tokens.
// Threading: pure. Tested by tests/spec/prompt_lookup_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/ids.h"

namespace met {

struct PromptLookupOptions {
  int32_t min_n = 5;      // shortest suffix that counts as a match; >= 1
  int32_t max_n = 5;      // longest suffix looked for; >= min_n
  int32_t max_draft = 5;  // most tokens proposed; >= 0
};

// Replaces `drafts` with the proposal for `history`; empty when nothing
// matches. Returns the length of the matched suffix (0 when none).
int32_t propose_prompt_lookup(std::span<const TokenId> history, const PromptLookupOptions& options,
                              std::vector<TokenId>& drafts);

// The same over the history `prompt` followed by `output`, without joining
// them.
int32_t propose_prompt_lookup(std::span<const TokenId> prompt, std::span<const TokenId> output,
                              const PromptLookupOptions& options, std::vector<TokenId>& drafts);

}  // namespace met
