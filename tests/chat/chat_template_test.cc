// ChatTemplate's public contract: parse once, render many times (also from
// many threads), a JSON object as context with key order kept, an injectable
// "now", and errors as values.
#include "chat/chat_template.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kChatMl =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

TEST(ChatTemplate, RendersAChatMlConversation) {
  auto tmpl = ChatTemplate::parse(kChatMl);
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().message();
  const Json context = Json::parse(R"({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": true})");
  auto out = tmpl->render(context);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, ContextKeysKeepTheirOrder) {
  auto tmpl = ChatTemplate::parse("{{ d|tojson }} {% for k in d %}{{ k }}{% endfor %}");
  ASSERT_TRUE(tmpl.ok());
  auto out = tmpl->render(Json::parse(R"({"d": {"z": 1, "a": 2, "m": 3}})"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, R"({"z": 1, "a": 2, "m": 3} zam)");
}

TEST(ChatTemplate, TheContextMustBeAnObject) {
  auto tmpl = ChatTemplate::parse("x");
  ASSERT_TRUE(tmpl.ok());
  EXPECT_FALSE(tmpl->render(Json::array()).ok());
  EXPECT_TRUE(tmpl->render(Json::object()).ok());
}

TEST(ChatTemplate, NowIsInjectable) {
  auto tmpl = ChatTemplate::parse("{{ strftime_now('%d %b %Y %H:%M:%S %a') }}");
  ASSERT_TRUE(tmpl.ok());
  TemplateOptions options;
  options.now_iso8601 = "2026-07-26T09:30:00";
  EXPECT_EQ(*tmpl->render(Json::object(), options), "26 Jul 2026 09:30:00 Sun");
  options.now_iso8601 = "2024-02-29";
  EXPECT_EQ(*tmpl->render(Json::object(), options), "29 Feb 2024 00:00:00 Thu");
  options.now_iso8601 = "2023-02-29";
  EXPECT_FALSE(tmpl->render(Json::object(), options).ok());
  options.now_iso8601 = "yesterday";
  EXPECT_FALSE(tmpl->render(Json::object(), options).ok());
  EXPECT_TRUE(tmpl->render(Json::object(), TemplateOptions{}).ok());  // the real clock
}

TEST(ChatTemplate, ParseErrorsAreValues) {
  auto tmpl = ChatTemplate::parse("{% if %}");
  ASSERT_FALSE(tmpl.ok());
  EXPECT_TRUE(tmpl.status().message().starts_with("TemplateSyntaxError: ")) << tmpl.status().message();
  EXPECT_NE(tmpl.status().message().find("(line 1, column"), std::string::npos);
}

TEST(ChatTemplate, JsonValuesBecomeTemplateValues) {
  auto tmpl = ChatTemplate::parse("{{ v }}|{{ v|tojson }}");
  ASSERT_TRUE(tmpl.ok());
  const Json context = Json::parse(R"({"v": [null, true, 1, -2, 1.5, "s", {"k": [1]}, 18446744073709551615]})");
  auto out = tmpl->render(context);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(*out,
            "[None, True, 1, -2, 1.5, 's', {'k': [1]}, 1.8446744073709552e+19]|"
            "[null, true, 1, -2, 1.5, \"s\", {\"k\": [1]}, 1.8446744073709552e+19]");
}

TEST(ChatTemplate, DeeplyNestedContextIsRefused) {
  auto tmpl = ChatTemplate::parse("x");
  ASSERT_TRUE(tmpl.ok());
  Json deep = Json::array();
  for (int i = 0; i < 1000; ++i) deep = Json::array({deep});
  Json context = Json::object();
  context["d"] = deep;
  EXPECT_FALSE(tmpl->render(context).ok());
}

TEST(ChatTemplate, RendersConcurrentlyFromOneParse) {
  auto tmpl = ChatTemplate::parse(kChatMl);
  ASSERT_TRUE(tmpl.ok());
  std::vector<std::string> outputs(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < outputs.size(); ++t) {
    threads.emplace_back([&, t] {
      Json context;
      context["messages"] = Json::array({Json{{"role", "user"}, {"content", std::to_string(t)}}});
      for (int i = 0; i < 50; ++i) outputs[t] = tmpl->render(context).value();
    });
  }
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < outputs.size(); ++t) {
    EXPECT_EQ(outputs[t], "<|im_start|>user\n" + std::to_string(t) + "<|im_end|>\n");
  }
}

TEST(ChatTemplate, MovesKeepTheParsedProgram) {
  auto tmpl = ChatTemplate::parse("{{ 'x' ~ 1 }}");
  ASSERT_TRUE(tmpl.ok());
  ChatTemplate moved = std::move(tmpl).value();
  EXPECT_EQ(*moved.render(Json::object()), "x1");
}

}  // namespace
}  // namespace met
