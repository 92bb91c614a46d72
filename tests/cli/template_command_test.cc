// Tests for `met template render`, run as a user would run it.
#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using testing::met_binary;
using testing::run_command;
using testing::shell_quote;

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::string render_command(const testing::TempDir& dir, const std::string& extra = "") {
  return met_binary() + " template render --template " + shell_quote(dir.file("t.jinja")) + " --context " +
         shell_quote(dir.file("c.json")) + extra;
}

TEST(MetTemplateRender, WritesExactlyTheRenderingToStdout) {
  testing::TempDir dir;
  write(dir.file("t.jinja"),
        "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}\n");
  write(dir.file("c.json"),
        R"({"messages": [{"role": "user", "content": "Héllo \"quoted\""}], "add_generation_prompt": true})");
  auto r = run_command(render_command(dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<|user|>Héllo \"quoted\"\n<|assistant|>");
  EXPECT_EQ(r.err, "");
}

TEST(MetTemplateRender, NowFeedsStrftimeNow) {
  testing::TempDir dir;
  write(dir.file("t.jinja"), "{{ strftime_now('%d %b %Y') }}");
  write(dir.file("c.json"), "{}");
  auto r = run_command(render_command(dir, " --now 2026-07-26T09:30:00"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "26 Jul 2026");
}

TEST(MetTemplateRender, RaiseExceptionExitsNonZeroWithOneLine) {
  testing::TempDir dir;
  write(dir.file("t.jinja"), "{{ raise_exception('System role not supported') }}");
  write(dir.file("c.json"), "{}");
  auto r = run_command(render_command(dir));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "met template: TemplateError: System role not supported\n");
}

TEST(MetTemplateRender, SyntaxErrorsNameLineAndColumn) {
  testing::TempDir dir;
  write(dir.file("t.jinja"), "ok\n{% if %}");
  write(dir.file("c.json"), "{}");
  auto r = run_command(render_command(dir));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("met template: TemplateSyntaxError: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("(line 2, column"), std::string::npos) << r.err;
}

TEST(MetTemplateRender, BadContextExitsNonZeroWithOneLine) {
  testing::TempDir dir;
  write(dir.file("t.jinja"), "x");
  write(dir.file("c.json"), "{not json");
  auto r = run_command(render_command(dir));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("met template: context ", 0), 0u) << r.err;
  write(dir.file("c.json"), "[1, 2]");
  r = run_command(render_command(dir));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("is not a JSON object"), std::string::npos) << r.err;
}

TEST(MetTemplateRender, MissingFilesAndFlagsAreErrors) {
  testing::TempDir dir;
  write(dir.file("c.json"), "{}");
  auto r = run_command(render_command(dir));  // no t.jinja
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.err.rfind("met template: ", 0), 0u) << r.err;
  r = run_command(met_binary() + " template render --context " + shell_quote(dir.file("c.json")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--template"), std::string::npos) << r.err;
}

TEST(MetTemplateRender, ModelTemplateGetsBosAndEosFromTheVocab) {
  MET_REQUIRE_SHARED(model, "tokenizer-vectors/ggml-vocab-phi-3.gguf");
  testing::TempDir dir;
  write(dir.file("c.json"), R"({"messages": [{"role": "user", "content": "Hi"}]})");
  auto r = run_command(met_binary() + " template render --model " + shell_quote(model) + " --context " +
                       shell_quote(dir.file("c.json")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "<s><|user|>\nHi<|end|>\n<|assistant|>\n");
  write(dir.file("c.json"), R"({"bos_token": "[BOS]", "messages": []})");
  r = run_command(met_binary() + " template render --model " + shell_quote(model) + " --context " +
                  shell_quote(dir.file("c.json")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[BOS]");
}

}  // namespace
}  // namespace met
