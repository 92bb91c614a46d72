// The strong test: generate with uniformly random allowed tokens from a real
// 152k vocab (noise weights, in effect), then check the text with an
// independent oracle: python3's jsonschema for JSON Schemas and json_object
// mode, a small recursive-descent checker for an arithmetic GBNF. Also checks
// fill_mask against brute force (try every token) at many random states.
#include <gtest/gtest.h>

#include <random>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"
#include "grammar/grammar_testing.h"
#include "grammar/json_schema.h"

namespace met {
namespace {

using testing::generate_random;
using testing::Generation;

#define MET_REQUIRE_QWEN2(trie)                                                                        \
  const TokenTrie* trie = testing::qwen2_trie();                                                      \
  if (trie == nullptr) GTEST_SKIP() << "../shared/tokenizer-vectors/ggml-vocab-qwen2.gguf is absent " \
                                       "(set MET_SHARED_DIR to the shared/ folder)"

const char* const kSchemas[] = {
    R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":150}},"required":["name","age"],"additionalProperties":false})",
    R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":5})",
    R"({"enum":["red","green","blue",42,null]})",
    R"({"type":"object","properties":{"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","maxLength":8},"maxItems":3}},"additionalProperties":false})",
    R"({"type":"string","pattern":"^[A-Z]{2}-[0-9]{3}$"})",
    R"({"type":"string","format":"date-time"})",
    R"({"type":"object","properties":{"id":{"type":"string","format":"uuid"},"email":{"type":"string","format":"email"}},"required":["id","email"],"additionalProperties":false})",
    R"({"anyOf":[{"type":"integer","minimum":-5,"maximum":5},{"type":"string","minLength":1,"maxLength":3},{"type":"null"}]})",
    R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind","x"],"additionalProperties":false},{"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"boolean"}},"required":["kind","y"],"additionalProperties":false}]})",
    R"({"$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}},"type":"array","items":{"$ref":"#/$defs/pt"},"maxItems":3})",
    R"({"type":"array","prefixItems":[{"type":"string","maxLength":5},{"type":"integer"},{"type":"boolean"}],"items":false,"minItems":2})",
    R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":{"type":"integer","minimum":0,"maximum":9}})",
    R"({"allOf":[{"type":"object","properties":{"a":{"type":"string","maxLength":4}},"required":["a"]},{"properties":{"b":{"type":"integer","exclusiveMinimum":0}},"required":["b"]}],"additionalProperties":false,"properties":{"a":{},"b":{}}})",
    R"({"type":"object","properties":{"when":{"type":"string","format":"date"},"n":{"type":"number","minimum":1}},"required":["when"],"additionalProperties":false})",
    R"({"definitions":{"t":{"type":"object","properties":{"v":{"type":"integer","minimum":0,"maximum":99},"kids":{"type":"array","items":{"$ref":"#/definitions/t"},"maxItems":2}},"required":["v"],"additionalProperties":false}},"$ref":"#/definitions/t"})",
};

TEST(RandomGeneration, OutputOfEverySchemaValidatesWithPythonJsonschema) {
  MET_REQUIRE_QWEN2(trie);
  if (!testing::has_python_jsonschema()) GTEST_SKIP() << "python3 with jsonschema is absent (apt install python3-jsonschema)";
  int finished_total = 0;
  for (const char* schema_text : kSchemas) {
    const std::string schema = schema_text;
    Result<Grammar> g = compile_json_schema(std::string_view(schema));
    ASSERT_TRUE(g.ok()) << schema << "\n" << g.status().to_string();
    std::vector<std::string> texts;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const Generation gen = generate_random(*g, *trie, seed, 600);
      if (gen.finished) texts.push_back(gen.text);
    }
    finished_total += static_cast<int>(texts.size());
    const std::vector<std::string> verdicts = testing::python_validate(schema, texts);
    ASSERT_EQ(verdicts.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      EXPECT_EQ(verdicts[i], "") << "schema: " << schema << "\ntext: " << texts[i];
    }
  }
  EXPECT_GT(finished_total, 30) << "most random generations should finish within 600 tokens";
}

TEST(RandomGeneration, JsonObjectModeAlwaysGivesAnObject) {
  MET_REQUIRE_QWEN2(trie);
  if (!testing::has_python_jsonschema()) GTEST_SKIP() << "python3 with jsonschema is absent (apt install python3-jsonschema)";
  const Grammar g = json_object_grammar();
  std::vector<std::string> texts;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const Generation gen = generate_random(g, *trie, seed, 400, 0.9);
    if (gen.finished) texts.push_back(gen.text);
  }
  EXPECT_GE(texts.size(), 4u);
  const std::vector<std::string> verdicts = testing::python_validate(R"({"type":"object"})", texts);
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(verdicts[i], "") << texts[i];
}

// expr ::= term (("+"|"-") term)*; term ::= factor (("*"|"/") factor)*;
// factor ::= digits | "(" expr ")"
class ArithmeticChecker {
 public:
  explicit ArithmeticChecker(std::string_view s) : s_(s) {}
  bool check() { return expr() && pos_ == s_.size(); }

 private:
  bool expr() {
    if (!term()) return false;
    while (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) {
      ++pos_;
      if (!term()) return false;
    }
    return true;
  }
  bool term() {
    if (!factor()) return false;
    while (pos_ < s_.size() && (s_[pos_] == '*' || s_[pos_] == '/')) {
      ++pos_;
      if (!factor()) return false;
    }
    return true;
  }
  bool factor() {
    if (pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      if (!expr() || pos_ >= s_.size() || s_[pos_] != ')') return false;
      ++pos_;
      return true;
    }
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9' && pos_ - start < 3) ++pos_;
    return pos_ > start;
  }
  std::string_view s_;
  size_t pos_ = 0;
};

TEST(RandomGeneration, ArithmeticGbnfOutputParsesWithAnIndependentChecker) {
  MET_REQUIRE_QWEN2(trie);
  const Grammar g = testing::gbnf(
      "root ::= expr\n"
      "expr ::= term ((\"+\" | \"-\") term)*\n"
      "term ::= factor ((\"*\" | \"/\") factor)*\n"
      "factor ::= [0-9]{1,3} | \"(\" expr \")\"\n");
  int finished = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const Generation gen = generate_random(g, *trie, seed, 300);
    if (!gen.finished) continue;
    ++finished;
    EXPECT_TRUE(ArithmeticChecker(gen.text).check()) << gen.text;
  }
  EXPECT_GE(finished, 5);
}

TEST(GrammarMask, FillMaskEqualsTryingEveryTokenOnARealVocab) {
  MET_REQUIRE_QWEN2(trie);
  Result<Grammar> g = compile_json_schema(std::string_view(kSchemas[3]));
  ASSERT_TRUE(g.ok());
  GrammarMatcher walker(*g, *trie);
  GrammarMatcher brute(*g, *trie, {.mask_cache_entries = 0});
  std::mt19937_64 rng(5);
  std::vector<uint64_t> mask(trie->mask_words());
  for (int step = 0; step < 12 && !walker.is_terminated(); ++step) {
    walker.fill_mask(mask);
    std::vector<TokenId> allowed;
    for (size_t t = 0; t < trie->vocab_size(); ++t) {
      const auto id = static_cast<TokenId>(t);
      const bool masked = (mask[t / 64] >> (t % 64)) & 1;
      const bool accepts = brute.accept_token(id);
      if (accepts) brute.rollback(1);
      ASSERT_EQ(masked, accepts) << "token " << t << " '" << trie->bytes(id) << "' at step " << step;
      if (masked && !trie->is_eog(id)) allowed.push_back(id);
    }
    if (allowed.empty()) break;
    const TokenId pick = allowed[rng() % allowed.size()];
    ASSERT_TRUE(walker.accept_token(pick));
    ASSERT_TRUE(brute.accept_token(pick));
  }
}

}  // namespace
}  // namespace met
