// Tests regex_to_gbnf: which JSON-encoded string contents a pattern accepts,
// and the errors for constructs it cannot express.
#include "grammar/regex_to_gbnf.h"

#include <gtest/gtest.h>

#include "grammar/grammar_testing.h"
#include "grammar/json_primitives.h"

namespace met {
namespace {

Grammar pattern_grammar(std::string_view pattern) {
  Result<std::string> expr = regex_to_gbnf(pattern, "char");
  EXPECT_TRUE(expr.ok()) << pattern << ": " << expr.status().to_string();
  const std::string text = "root ::= " + (expr.ok() ? *expr : std::string("\"\"")) + "\nchar ::= " +
                           std::string(*json_primitive_body("char")) + "\nhex ::= " +
                           std::string(*json_primitive_body("hex")) + "\n";
  return testing::gbnf(text);
}

TEST(RegexToGbnf, AcceptsTheEncodedStringsThePatternMatches) {
  const struct {
    const char* pattern;
    std::vector<const char*> accepted;
    std::vector<const char*> rejected;
  } cases[] = {
      {"^a(b|cd)*e?$", {"a", "abcdb", "abe"}, {"ac", "xa"}},
      {"^\\d{2,3}[.-]\\w+$", {"12.x_9", "123-a"}, {"1.x", "12 x"}},
      {"^[^a-z]$", {"A", "\\\"", "\\\\"}, {"a", "AB"}},
      {"^\"x\\\\$", {"\\\"x\\\\"}, {"\"x\\"}},
      {"^.$", {"a", "\\t"}, {"\\n", ""}},
      {"mid", {"mid", "a mid b"}, {"mi d"}},
      {"^(?:ab)+?$", {"ab", "abab"}, {"a"}},
  };
  for (const auto& c : cases) {
    const Grammar g = pattern_grammar(c.pattern);
    for (const char* s : c.accepted) EXPECT_TRUE(testing::grammar_matches(g, s)) << c.pattern << " should accept " << s;
    for (const char* s : c.rejected) EXPECT_FALSE(testing::grammar_matches(g, s)) << c.pattern << " should reject " << s;
  }
}

TEST(RegexToGbnf, RejectsWhatItCannotExpress) {
  for (const char* p : {"(?=a)", "\\1", "a\\b", "(a", "[a", "*a", "a{2", "a^b", "a++"}) {
    EXPECT_FALSE(regex_to_gbnf(p, "char").ok()) << p;
  }
}

}  // namespace
}  // namespace met
