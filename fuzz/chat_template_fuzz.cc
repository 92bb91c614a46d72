// chat_template_fuzz: libFuzzer target for ChatTemplate::parse and render
// (src/chat/chat_template.h). The input is a template source; it is rendered
// with a small chat context and small limits. Checks, beyond "no crash, no
// hang, no sanitizer report": every failure is one non-empty line, a syntax
// error names its line and column, a limit failure is kOutOfRange, and the
// output never passes max_output_bytes.
// Threading: libFuzzer's thread. Built by fuzz/CMakeLists.txt (MET_FUZZ=ON).
// Seed it with ../shared/chat-templates/*.jinja.
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "core/check.h"

namespace {

const nlohmann::ordered_json& fuzz_context() {
  static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"({
    "bos_token": "<s>", "eos_token": "</s>", "add_generation_prompt": true,
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hi \"there\" 🙂"},
      {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": {"x": [1, 2.5, null]}}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "{\"ok\": true}"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
  })");
  return context;
}

void check_one_line(const met::Status& s) {
  MET_CHECK(!s.ok(), "expected a failure");
  MET_CHECK(!s.message().empty(), "empty error message");
  MET_CHECK(s.message().find('\n') == std::string::npos || met::is_template_exception(s),
            "multi-line error: {}", s.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  auto tmpl = met::ChatTemplate::parse(source);
  if (!tmpl.ok()) {
    check_one_line(tmpl.status());
    MET_CHECK(tmpl.status().message().find("(line ") != std::string::npos, "no location: {}",
              tmpl.status().message());
    return 0;
  }
  met::TemplateOptions options;
  options.now_iso8601 = "2026-07-26T09:30:00";
  options.max_output_bytes = 1 << 16;
  options.max_recursion = 16;
  options.max_loop_iterations = 10'000;
  options.max_heap_bytes = 1 << 22;
  options.max_steps = 200'000;
  auto out = tmpl->render(fuzz_context(), options);
  if (out.ok()) {
    MET_CHECK(out->size() <= options.max_output_bytes, "output of {} bytes passed the limit", out->size());
  } else if (!met::is_template_exception(out.status())) {
    check_one_line(out.status());
  }
  return 0;
}
