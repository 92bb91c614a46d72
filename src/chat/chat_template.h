// ChatTemplate: a model's Jinja chat template, parsed once and rendered per
// request with a JSON context (messages, tools, add_generation_prompt,
// bos_token, …) the way Hugging Face's apply_chat_template renders it
// (Jinja2 with trim_blocks, lstrip_blocks, loop controls, its tojson,
// raise_exception and strftime_now). met's own interpreter lives in jinja/.
// Errors are values: a syntax error names the line and column; a render error
// is "UndefinedError: …", "TypeError: …" and so on with the location appended,
// "TemplateError: <msg>" when the template called raise_exception(msg)
// (is_template_exception), or a LimitError (kOutOfRange) when the render
// passed one of TemplateOptions' limits.
// Invariants: a parsed template is immutable; a render never runs past its
// limits (output, heap, loop iterations, macro depth, steps).
// Threading: render() is const and may run on many threads at once.
// Tested by tests/chat/chat_template_test.cc and tests/chat/cases_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace met {

namespace jinja {
struct Program;
}

struct TemplateOptions {
  // What strftime_now() formats, as "YYYY-MM-DD[THH:MM[:SS]]"; nullopt means
  // the machine's local time when render() runs.
  std::optional<std::string> now_iso8601;
  size_t max_output_bytes = size_t{1} << 24;
  int max_recursion = 64;  // macro calls nested
  uint64_t max_loop_iterations = 1'000'000;
  size_t max_heap_bytes = size_t{1} << 28;  // strings, lists and dicts the render builds
  uint64_t max_steps = 100'000'000;         // expressions evaluated and elements visited
};

class ChatTemplate {
 public:
  static Result<ChatTemplate> parse(std::string_view source);

  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;
  ~ChatTemplate();

  // `context` must be a JSON object; its keys become the template's variables.
  Result<std::string> render(const nlohmann::ordered_json& context, const TemplateOptions& options = {}) const;

  // The template's text, as parsed (chat/output/format_detection.h reads it).
  const std::string& source() const { return source_; }

 private:
  ChatTemplate(std::unique_ptr<const jinja::Program> program, std::string source);

  std::unique_ptr<const jinja::Program> program_;
  std::string source_;
};

// Whether `s` is the failure the template raised itself with raise_exception().
bool is_template_exception(const Status& s);

}  // namespace met
