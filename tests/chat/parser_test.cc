// The parser: tree shapes for precedence and statements, and syntax errors
// that name the line and column.
#include "chat/jinja/parser.h"

#include <gtest/gtest.h>

#include "chat/render_helper.h"

namespace met::jinja {
namespace {

const Expr& output_expr(const Program& p, size_t i = 0) {
  return *std::get<node::Output>(p.body.at(i)->node).expr;
}

TEST(Parser, BuildsOneStatementPerTextTagAndBlock) {
  auto p = Parser::parse("a{{ x }}{% if y %}b{% else %}c{% endif %}{% for i in l %}{% endfor %}");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ((*p)->body.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<node::Text>((*p)->body[0]->node));
  EXPECT_TRUE(std::holds_alternative<node::Output>((*p)->body[1]->node));
  const auto& branch = std::get<node::If>((*p)->body[2]->node);
  EXPECT_EQ(branch.branches.size(), 1u);
  EXPECT_EQ(branch.otherwise.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<node::For>((*p)->body[3]->node));
}

TEST(Parser, MultiplicationBindsTighterThanAddition) {
  auto p = Parser::parse("{{ 1 + 2 * 3 }}");
  ASSERT_TRUE(p.ok());
  const auto& add = std::get<node::Arith>(output_expr(**p).node);
  EXPECT_EQ(add.op, ArithOp::kAdd);
  EXPECT_EQ(std::get<node::Arith>(add.right->node).op, ArithOp::kMul);
}

TEST(Parser, FiltersBindTighterThanUnaryMinusOperand) {
  auto p = Parser::parse("{{ -x|abs }}");
  ASSERT_TRUE(p.ok());
  const auto& filter = std::get<node::Filter>(output_expr(**p).node);
  EXPECT_EQ(filter.name, "abs");
  EXPECT_TRUE(std::holds_alternative<node::Unary>(filter.input->node));
}

TEST(Parser, TestsTakeABareArgument) {
  auto p = Parser::parse("{{ n is not divisibleby 3 }}");
  ASSERT_TRUE(p.ok());
  const auto& test = std::get<node::Test>(output_expr(**p).node);
  EXPECT_EQ(test.name, "divisibleby");
  EXPECT_TRUE(test.negated);
  EXPECT_EQ(test.args.size(), 1u);
}

TEST(Parser, ForLoopsReadTargetsFilterAndElse) {
  auto p = Parser::parse("{% for k, v in d.items() if v %}x{% else %}y{% endfor %}");
  ASSERT_TRUE(p.ok());
  const auto& loop = std::get<node::For>((*p)->body[0]->node);
  EXPECT_EQ(loop.targets, (std::vector<std::string>{"k", "v"}));
  EXPECT_NE(loop.filter, nullptr);
  EXPECT_EQ(loop.otherwise.size(), 1u);
  EXPECT_FALSE(loop.body_captures);
}

TEST(Parser, BodiesThatDefineMacrosAreMarkedAsCaptured) {
  auto p = Parser::parse("{% for i in l %}{% if x %}{% macro m() %}{% endmacro %}{% endif %}{% endfor %}");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(std::get<node::For>((*p)->body[0]->node).body_captures);
}

TEST(Parser, SetReadsNamespaceTargetsAndBlockSets) {
  auto p = Parser::parse("{% set ns.x = 1 %}{% set y | trim %} a {% endset %}");
  ASSERT_TRUE(p.ok());
  const auto& attr = std::get<node::Set>((*p)->body[0]->node);
  EXPECT_EQ(attr.targets[0], "ns");
  EXPECT_EQ(attr.attribute, "x");
  const auto& block = std::get<node::Set>((*p)->body[1]->node);
  EXPECT_EQ(block.value, nullptr);
  EXPECT_NE(block.filter, nullptr);
}

TEST(Parser, SyntaxErrorsNameLineAndColumn) {
  struct Case {
    std::string_view source;
    std::string_view message;
  };
  const Case cases[] = {
      {"{% if x %}\n{% endfor %}", "TemplateSyntaxError: unknown tag 'endfor' (line 2, column 4)"},
      {"{% if x %}open", "TemplateSyntaxError: unexpected end of template, expected 'endif' (line 1, column 15)"},
      {"{{ 1 + }}", "TemplateSyntaxError: expected an expression, got '}}' (line 1, column 8)"},
      {"{% for %}", "TemplateSyntaxError: expected a name, got '%}' (line 1, column 8)"},
      {"{% frobnicate %}", "TemplateSyntaxError: unknown tag 'frobnicate' (line 1, column 4)"},
      {"{% include 'x' %}", "TemplateSyntaxError: the 'include' tag is not supported in chat templates"},
      {"{{ f(*args) }}", "TemplateSyntaxError: *args and **kwargs in calls are not supported"},
      {"{% for x in y recursive %}{% endfor %}", "TemplateSyntaxError: recursive for loops are not supported"},
      {"{% continue %}", "TemplateSyntaxError: 'continue' is only allowed inside a for loop (line 1, column 1)"},
      {"{{ x is defined is none }}", "TemplateSyntaxError: you cannot chain multiple tests with is"},
  };
  for (const Case& c : cases) {
    auto r = Parser::parse(c.source);
    ASSERT_FALSE(r.ok()) << c.source;
    EXPECT_TRUE(r.status().message().starts_with(c.message)) << c.source << "\n" << r.status().message();
  }
}

TEST(Parser, DeepNestingIsASyntaxErrorNotACrash) {
  const std::string parens = std::string(5000, '(') + "1" + std::string(5000, ')');
  auto r = Parser::parse("{{ " + parens + " }}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nests deeper than"), std::string::npos);
  std::string blocks;
  for (int i = 0; i < 3000; ++i) blocks += "{% if x %}";
  EXPECT_FALSE(Parser::parse(blocks).ok());
}

TEST(Parser, LongOperatorChainsCountAsNesting) {
  // Each of these builds a left-deep tree; 100000 links would overflow the
  // stack when the tree is evaluated or destroyed, so they are refused.
  for (const std::string link : {" + 1", ".a", "|trim", " or x", " * 2", "[0]"}) {
    std::string source = "{{ x";
    for (int i = 0; i < 100000; ++i) source += link;
    auto r = Parser::parse(source + " }}");
    ASSERT_FALSE(r.ok()) << link;
    EXPECT_NE(r.status().message().find("nests deeper than"), std::string::npos) << r.status().message();
  }
  std::string chain = "{{ 0";
  for (int i = 0; i < 100; ++i) chain += " + 1";
  EXPECT_EQ(testing::render_or_error(chain + " }}"), "100");
}

TEST(Parser, ReasonableNestingParses) {
  const std::string parens = std::string(30, '(') + "1" + std::string(30, ')');
  EXPECT_EQ(testing::render_or_error("{{ " + parens + " }}"), "1");
}

}  // namespace
}  // namespace met::jinja
