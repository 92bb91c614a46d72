// Helpers for the grammar tests. See grammar_testing.h.
#include "grammar/grammar_testing.h"

#include <fstream>
#include <memory>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"
#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met::testing {

const TokenTrie& byte_trie() {
  static const TokenTrie kTrie = [] {
    std::vector<std::string> pieces;
    for (int b = 0; b < 256; ++b) pieces.emplace_back(1, static_cast<char>(b));
    pieces.emplace_back("</s>");
    return TokenTrie::from_pieces(std::move(pieces), {256});
  }();
  return kTrie;
}

bool grammar_matches(const Grammar& grammar, std::string_view text) {
  GrammarMatcher m(grammar, byte_trie(), {.mask_cache_entries = 0});
  return m.accept_bytes(text) && m.is_accepting();
}

Grammar gbnf(std::string_view text) {
  Result<Grammar> g = compile_gbnf(text);
  EXPECT_TRUE(g.ok()) << g.status().to_string() << "\n" << text;
  if (!g.ok()) return std::move(compile_gbnf("root ::= \"\"")).value();
  return std::move(g).value();
}

namespace {
// The id of the n-th set bit of `mask` (0-based, lowest first).
// REQUIRES: mask has more than n bits set.
TokenId nth_set_bit(const std::vector<uint64_t>& mask, size_t n) {
  size_t w = 0;
  for (;; ++w) {
    const auto count = static_cast<size_t>(__builtin_popcountll(mask[w]));
    if (n < count) break;
    n -= count;
  }
  uint64_t bits = mask[w];
  for (; n > 0; --n) bits &= bits - 1;
  return static_cast<TokenId>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
}

struct Qwen2 {
  std::optional<Tokenizer> tokenizer;
  std::optional<TokenTrie> trie;
};
const Qwen2& qwen2() {
  static const Qwen2 kQwen2 = [] {
    Qwen2 q;
    const std::optional<std::string> path = shared_path("tokenizer-vectors/ggml-vocab-qwen2.gguf");
    if (!path) return q;
    Result<GgufFile> file = GgufFile::open(*path);
    if (!file.ok()) return q;
    Result<Tokenizer> t = Tokenizer::from_gguf(file->metadata());
    if (!t.ok()) return q;
    q.tokenizer.emplace(std::move(t).value());
    q.trie.emplace(TokenTrie::build(*q.tokenizer));
    return q;
  }();
  return kQwen2;
}
}  // namespace

const Tokenizer* qwen2_tokenizer() { return qwen2().tokenizer ? &*qwen2().tokenizer : nullptr; }
const TokenTrie* qwen2_trie() { return qwen2().trie ? &*qwen2().trie : nullptr; }

Generation generate_random(const Grammar& grammar, const TokenTrie& trie, uint64_t seed, size_t max_tokens,
                           double eog_probability) {
  GrammarMatcher m(grammar, trie);
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> mask(trie.mask_words());
  Generation g;
  while (g.num_tokens < max_tokens) {
    // The allowed tokens other than end-of-generation, counted by words
    // (a per-token loop over a 150k vocabulary dominated the ASan run).
    m.fill_mask(mask);
    for (const TokenId id : trie.eog_ids()) mask[static_cast<size_t>(id) / 64] &= ~(uint64_t{1} << (id % 64));
    size_t allowed = 0;
    for (const uint64_t bits : mask) allowed += static_cast<size_t>(__builtin_popcountll(bits));
    const bool eog = m.is_accepting() && (allowed == 0 || std::bernoulli_distribution(eog_probability)(rng));
    if (eog) {
      EXPECT_TRUE(m.accept_token(trie.eog_ids()[0]));
      g.finished = true;
      return g;
    }
    if (allowed == 0) {
      ADD_FAILURE() << "no token allowed and not accepting after: " << g.text;
      return g;
    }
    const TokenId t = nth_set_bit(mask, std::uniform_int_distribution<size_t>(0, allowed - 1)(rng));
    EXPECT_TRUE(m.accept_token(t)) << "fill_mask allowed token " << t << " that accept_token rejects";
    g.text += trie.bytes(t);
    ++g.num_tokens;
  }
  return g;
}

bool has_python_jsonschema() {
  static const bool kHas = run_command("python3 -c 'import jsonschema' 2>/dev/null").exit_code == 0;
  return kHas;
}

std::vector<std::string> python_validate(const std::string& schema, const std::vector<std::string>& instances) {
  TempDir dir;
  const std::string in_path = dir.path() + "/cases.json";
  {
    std::ofstream out(in_path);
    out << nlohmann::json{{"schema", schema}, {"instances", instances}}.dump();
  }
  const char* script =
      "import json,sys,jsonschema\n"
      "d=json.load(open(sys.argv[1]))\n"
      "s=json.loads(d['schema'])\n"
      "cls=jsonschema.validators.validator_for(s, default=jsonschema.Draft202012Validator)\n"
      "v=cls(s)\n"
      "out=[]\n"
      "for t in d['instances']:\n"
      "  try:\n"
      "    x=json.loads(t)\n"
      "    e=jsonschema.exceptions.best_match(v.iter_errors(x))\n"
      "    out.append('' if e is None else e.message[:300])\n"
      "  except Exception as ex:\n"
      "    out.append('not JSON: '+str(ex)[:200])\n"
      "print(json.dumps(out))\n";
  const std::string script_path = dir.path() + "/check.py";
  std::ofstream(script_path) << script;
  const CommandOutput r = run_command("python3 " + shell_quote(script_path) + " " + shell_quote(in_path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return std::vector<std::string>(instances.size(), "python failed: " + r.err);
  return nlohmann::json::parse(r.out).get<std::vector<std::string>>();
}

}  // namespace met::testing
