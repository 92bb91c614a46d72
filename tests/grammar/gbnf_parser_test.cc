// Tests compile_gbnf: what it accepts, the errors (with line:column) for what
// it rejects, and printing back (to_gbnf) as a fixed point.
#include "grammar/gbnf_parser.h"

#include <gtest/gtest.h>

#include "grammar/grammar_testing.h"

namespace met {
namespace {

using testing::gbnf;

TEST(GbnfParser, AcceptsEveryConstructOfTheSyntax) {
  const char* grammars[] = {
      R"(root ::= "a")",
      R"(root ::= "a" | "b" | )",
      "root ::= x y\nx ::= [a-z0-9_]+\ny ::= [^\"\\\\]* # comment\n",
      R"(root ::= . "\n\r\t\\\"\[\]\x41\u00E9\U0001F600")",
      R"(root ::= ("a" | "b")* "c"? "d"+)",
      R"(root ::= "a"{3} "b"{2,} "c"{1,4} "d"{,2})",
      "root ::=\n  \"a\"\n  | \"b\"\n",
      "root ::= (\n  \"a\"\n  \"b\"\n)\n",
      "# leading comment\n\nroot ::= \"x\" # trailing\n\n",
      R"(root ::= [\]\-\^a-c])",
      R"(root ::= "")",
      "root ::= item\nitem ::= \"(\" item* \")\"",
  };
  for (const char* text : grammars) {
    Result<Grammar> g = compile_gbnf(text);
    EXPECT_TRUE(g.ok()) << text << "\n" << g.status().to_string();
  }
}

TEST(GbnfParser, RejectsBadGrammarsWithLineColumnAndReason) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {R"(root ::= "a)", "1:10: unterminated string literal"},
      {"root ::= [a-z", "1:10: unterminated character class"},
      {"root ::= foo", "1:10: undefined rule 'foo'"},
      {"x ::= \"a\"", "grammar has no 'root' rule"},
      {"root ::= \"a\"\nroot ::= \"b\"", "2:1: rule 'root' is defined twice"},
      {"root ::= (\"a\"", "1:10: unclosed '('"},
      {"root = \"a\"", "1:6: expected '::=' after rule name 'root'"},
      {"root ::= \"a\" )", "1:14: unexpected ')' in rule 'root'"},
      {R"(root ::= "\q")", "1:11: unknown escape '\\q'"},
      {R"(root ::= "\x4")", "1:11: escape needs 2 hex digits"},
      {R"(root ::= [z-a])", "1:11: character range is backwards"},
      {R"(root ::= "a"{3,1})", "1:10: repetition {3,1} has max < min"},
      {R"(root ::= "a"{99999})", "1:14: repetition count over 10000"},
      {"root ::= root \"a\"", "left recursion: root -> root"},
      {"root ::= x\nx ::= y? x \"a\"\ny ::= \"b\"", "left recursion: x -> x"},
      {"root ::= \"a\" root", "rule 'root' can never complete"},
      {"root ::= <tok>", "1:10: token references (<...>) are not supported"},
      {"root ::= \"a\"{", "1:13: expected a count in '{...}'"},
  };
  for (const Case& c : cases) {
    Result<Grammar> g = compile_gbnf(c.text);
    ASSERT_FALSE(g.ok()) << c.text;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(g.status().message().find(c.message), std::string::npos)
        << c.text << "\n got: " << g.status().message() << "\n want: " << c.message;
  }
}

TEST(GbnfParser, RejectsGroupsNestedTooDeep) {
  const std::string text = "root ::= " + std::string(100, '(') + "\"a\"" + std::string(100, ')');
  Result<Grammar> g = compile_gbnf(text);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("nested deeper"), std::string::npos);
}

TEST(GbnfParser, PrintingBackIsAFixedPoint) {
  const char* grammars[] = {
      R"(root ::= ("a" | [b-d])* "e"{2,3} . [^"\\] "\u00E9")",
      "root ::= x | \"\"\nx ::= \"[\" x? \"]\"",
      R"(root ::= "\x00\t\n" [\-\]\^] "a"?)",
  };
  for (const char* text : grammars) {
    const Grammar g = gbnf(text);
    const std::string once = g.to_gbnf();
    const std::string twice = gbnf(once).to_gbnf();
    EXPECT_EQ(once, twice) << text;
  }
}

TEST(GbnfParser, PrintedGrammarAcceptsTheSameStrings) {
  const Grammar g = gbnf(R"(root ::= ("ab" | [x-z]+)? "!"{1,2})");
  const Grammar back = gbnf(g.to_gbnf());
  for (const char* s : {"!", "ab!", "xyz!!", "ab", "abx!", "!!!", ""}) {
    EXPECT_EQ(testing::grammar_matches(g, s), testing::grammar_matches(back, s)) << s;
  }
}

}  // namespace
}  // namespace met
