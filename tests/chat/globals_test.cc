// Global functions: range, dict, namespace, raise_exception, strftime_now.
#include <gtest/gtest.h>


#include "chat/render_helper.h"

namespace met {
namespace {

TEST(Globals, RangeCountsLikePython) {
  testing::expect_renders({
      {R"j({{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }} {{ range(3, 1)|list }})j", R"j([0, 1, 2] [1, 4, 7] [5, 3, 1] [] [])j"},
  });
}

TEST(Globals, RangeRejectsAZeroStep) {
  testing::expect_renders({
      {R"j({{ range(1, 2, 0) }})j", R"j(ERROR: ValueError)j"},
  });
}

TEST(Globals, DictAndNamespaceTakeKeywordsOrAMapping) {
  testing::expect_renders({
      {R"j({{ dict(a=1, b=2) }} {{ dict({'x': 1}, y=2) }} {{ dict([('k', 'v')]) }} {{ namespace(x=1).x }} {{ namespace({'y': 2}).y }})j", R"j({'a': 1, 'b': 2} {'x': 1, 'y': 2} {'k': 'v'} 1 2)j"},
  });
}

TEST(Globals, RaiseExceptionFailsWithTheTemplatesMessage) {
  testing::expect_renders({
      {R"j({{ raise_exception('boom') }})j", R"j(ERROR: TemplateError: boom)j"},
      {R"j({% if true %}{{ raise_exception('Conversation roles must alternate user/assistant') }}{% endif %})j", R"j(ERROR: TemplateError: Conversation roles must alternate)j"},
  });
}

TEST(Globals, StrftimeNowFormatsTheInjectedTime) {
  testing::expect_renders({
      {R"j({{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%B %d, %Y') }}|{{ strftime_now('%A %j %-d') }})j", R"j(2026-07-26 09:30:00|26 Jul 2026|July 26, 2026|Sunday 207 26)j"},
      {R"j({% if strftime_now is defined %}{{ strftime_now('%Y') }}{% endif %})j", R"j(2026)j"},
  });
}

TEST(Globals, ContextVariablesShadowGlobals) {
  testing::expect_renders({
      {R"j({{ range }})j", R"j(mine)j", R"j({"range": "mine"})j"},
  });
}

}  // namespace
}  // namespace met
