// Error wording: Python exception names, the location of the innermost
// failing expression, and TemplateError from raise_exception left untouched.
#include "chat/jinja/errors.h"

#include <gtest/gtest.h>

#include "chat/chat_template.h"
#include "chat/render_helper.h"

namespace met {
namespace {

using jinja::UndefinedReason;
using jinja::Value;
using jinja::ValueKind;

TEST(Errors, UndefinedErrorNamesWhatWasMissing) {
  const std::string name = "tools";
  EXPECT_EQ(jinja::undefined_error(Value::undefined(UndefinedReason::kName, &name, ValueKind::kUndefined)).message(),
            "UndefinedError: 'tools' is undefined");
  EXPECT_EQ(jinja::undefined_error(Value::undefined(UndefinedReason::kAttribute, &name, ValueKind::kDict)).message(),
            "UndefinedError: 'dict object' has no attribute 'tools'");
  EXPECT_EQ(jinja::undefined_error(Value::undefined(UndefinedReason::kAttribute, &name, ValueKind::kNone)).message(),
            "UndefinedError: None has no attribute 'tools'");
  EXPECT_EQ(jinja::undefined_error(Value()).message(), "UndefinedError: 'value' is undefined");
}

TEST(Errors, RuntimeErrorsCarryTheLocationOfTheFailingExpression) {
  EXPECT_EQ(testing::render_or_error("line one\n{% if true %}\n  {{ 1 + 'x' }}{% endif %}"),
            "ERROR: TypeError: unsupported operand type(s) for +: 'int' and 'str' (line 3, column 8)");
  EXPECT_EQ(testing::render_or_error("{{ messages[0].content.upper() }}", R"({"messages": [{}]})"),
            "ERROR: UndefinedError: 'dict object' has no attribute 'content' (line 1, column 4)");
}

TEST(Errors, RaiseExceptionKeepsTheTemplatesMessageExactly) {
  auto tmpl = ChatTemplate::parse("{{ raise_exception('System role not supported') }}");
  ASSERT_TRUE(tmpl.ok());
  auto out = tmpl->render(nlohmann::ordered_json::object());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "TemplateError: System role not supported");
  EXPECT_TRUE(is_template_exception(out.status()));
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
}

TEST(Errors, OtherFailuresAreNotTemplateExceptions) {
  auto tmpl = ChatTemplate::parse("{{ x.y }}");
  ASSERT_TRUE(tmpl.ok());
  auto out = tmpl->render(nlohmann::ordered_json::object());
  ASSERT_FALSE(out.ok());
  EXPECT_FALSE(is_template_exception(out.status()));
  EXPECT_FALSE(is_template_exception(ok_status()));
}

TEST(Errors, LocatedAppendsLineAndColumnOnce) {
  const Status s = jinja::located(invalid_argument("TypeError: x"), jinja::SourceLoc{4, 2});
  EXPECT_EQ(s.message(), "TypeError: x (line 4, column 2)");
  EXPECT_EQ(jinja::located(jinja::template_error("m"), jinja::SourceLoc{4, 2}).message(), "TemplateError: m");
}

}  // namespace
}  // namespace met
