// Render limits: a template past any of them fails with a LimitError
// (kOutOfRange) instead of hanging or exhausting memory.
#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "chat/render_helper.h"

namespace met {
namespace {

Status render_status(std::string_view source, const TemplateOptions& options) {
  auto tmpl = ChatTemplate::parse(source);
  if (!tmpl.ok()) return tmpl.status();
  auto out = tmpl->render(nlohmann::ordered_json::object(), options);
  return out.ok() ? ok_status() : out.status();
}

void expect_limit(std::string_view source, const TemplateOptions& options, std::string_view words) {
  const Status s = render_status(source, options);
  ASSERT_FALSE(s.ok()) << source;
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.message();
  EXPECT_TRUE(s.message().starts_with("LimitError: ")) << s.message();
  EXPECT_NE(s.message().find(words), std::string::npos) << s.message();
}

TEST(Limits, InfiniteMacroRecursionStopsAtTheDepthLimit) {
  TemplateOptions options;
  options.max_recursion = 20;
  expect_limit("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", options, "nest deeper than 20");
}

TEST(Limits, DefaultRecursionLimitIsSafeForTheStack) {
  expect_limit("{% macro f(n) %}{% if true %}{% for i in [1] %}{{ (((f(n + 1)))) }}{% endfor %}{% endif %}{% endmacro %}{{ f(0) }}",
               TemplateOptions{}, "deeper than");
}

TEST(Limits, LoopIterationsAreCountedAcrossLoops) {
  TemplateOptions options;
  options.max_loop_iterations = 1000;
  expect_limit("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", options,
               "more than 1000 loop iterations");
  EXPECT_TRUE(render_status("{% for i in range(10) %}{% for j in range(10) %}{% endfor %}{% endfor %}", options).ok());
}

TEST(Limits, OutputSizeIsBounded) {
  TemplateOptions options;
  options.max_output_bytes = 1000;
  expect_limit("{% for i in range(100) %}0123456789abcdef{% endfor %}", options, "output passed 1000 bytes");
  expect_limit("{{ 'x' * 2000 }}", options, "output passed 1000 bytes");
  expect_limit("{% macro m() %}{% for i in range(100) %}0123456789abcdef{% endfor %}{% endmacro %}{% set x = m() %}",
               options, "output passed 1000 bytes");
}

TEST(Limits, GrowingValuesHitTheHeapBudget) {
  TemplateOptions options;
  options.max_heap_bytes = 1 << 20;
  expect_limit("{{ 'x' * 10000000 }}", options, "bytes");
  expect_limit("{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
               options, "bytes");
  expect_limit("{% set l = [1] %}{% for i in range(100) %}{% set _ = l.extend(l) %}{% endfor %}", options,
               "bytes");
  expect_limit("{{ range(100000000) }}", options, "too large");
}

TEST(Limits, StepBudgetStopsRunawayWork) {
  TemplateOptions options;
  options.max_steps = 100000;
  expect_limit("{% set a = [1] * 1000 %}{% for i in range(1000) %}{{ a == a[:] }}{% endfor %}", options,
               "more than 100000 steps");
}

TEST(Limits, AValueThatContainsItselfCannotBePrinted) {
  const Status s = render_status("{% set l = [] %}{% set _ = l.append(l) %}{{ l }}", TemplateOptions{});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("contains itself"), std::string::npos) << s.message();
}

TEST(Limits, AliasedValuesCannotBlowUpPrinting) {
  TemplateOptions options;
  options.max_output_bytes = 1 << 16;
  expect_limit("{% set a = ['xxxxxxxxxxxxxxxx'] * 100 %}{% set b = [a] * 100 %}{% set c = [b] * 100 %}{{ c }}",
               options, "bytes");
}

}  // namespace
}  // namespace met
