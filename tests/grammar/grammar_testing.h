// Helpers for the grammar tests: whole-string matching through a matcher,
// the shared qwen2 vocab, random constrained generation, and the python3
// jsonschema oracle.
// Threading: any. Used by the tests in tests/grammar/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/token_trie.h"
#include "tokenizer/tokenizer.h"

namespace met::testing {

// A vocab of the 256 single bytes plus one EOG token (id 256).
const TokenTrie& byte_trie();
// Whether `grammar` accepts exactly `text`.
bool grammar_matches(const Grammar& grammar, std::string_view text);
// compile_gbnf(text), failing the test on error.
Grammar gbnf(std::string_view text);

// The qwen2 vocab of ../shared/tokenizer-vectors (152k tokens), or nullopt.
const Tokenizer* qwen2_tokenizer();
const TokenTrie* qwen2_trie();

struct Generation {
  std::string text;
  bool finished = false;  // an EOG token was chosen
  size_t num_tokens = 0;
};
// Picks uniformly among allowed tokens (EOG, when allowed, with probability
// `eog_probability`) until EOG or `max_tokens`.
Generation generate_random(const Grammar& grammar, const TokenTrie& trie, uint64_t seed, size_t max_tokens,
                           double eog_probability = 0.5);

// Whether python3 with jsonschema is available.
bool has_python_jsonschema();
// For each instance text: "" when it parses and validates against `schema`,
// else python's reason.
std::vector<std::string> python_validate(const std::string& schema, const std::vector<std::string>& instances);

}  // namespace met::testing
