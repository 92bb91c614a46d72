// ChatTemplate. Tested by tests/chat/chat_template_test.cc and
// tests/chat/cases_test.cc.
#include "chat/chat_template.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "chat/jinja/ast.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/globals.h"
#include "chat/jinja/heap.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/json_convert.h"
#include "chat/jinja/parser.h"
#include "chat/jinja/runtime.h"
#include "chat/jinja/scope.h"

namespace met {
namespace {

// "YYYY-MM-DD", optionally followed by 'T' or ' ' and "HH:MM[:SS]" (anything
// after the seconds, such as a fraction or zone, is ignored).
Result<std::tm> parse_iso8601(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  char sep = 0;
  int consumed = 0;
  const int n = std::sscanf(text.c_str(), "%4d-%2d-%2d%n%c%2d:%2d:%2d", &year, &month, &day, &consumed,
                            &sep, &hour, &minute, &second);
  const bool date_only = n == 3 && static_cast<size_t>(consumed) == text.size();
  const bool with_time = n >= 6 && (sep == 'T' || sep == ' ');
  if ((!date_only && !with_time) || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || second > 60 || hour < 0 || minute < 0 || second < 0) {
    return invalid_argument("'{}' is not an ISO-8601 date and time such as 2026-07-26T09:30:00", text);
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = timegm(&tm);  // normalizes and fills wday and yday
  std::tm out{};
  gmtime_r(&t, &out);
  if (out.tm_mday != day) return invalid_argument("'{}' is not a valid date", text);
  return out;
}

Result<std::tm> resolve_now(const std::optional<std::string>& now_iso8601) {
  if (now_iso8601) return parse_iso8601(*now_iso8601);
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

}  // namespace

ChatTemplate::ChatTemplate(std::unique_ptr<const jinja::Program> program, std::string source)
    : program_(std::move(program)), source_(std::move(source)) {}
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;
ChatTemplate::~ChatTemplate() = default;

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  MET_ASSIGN_OR_RETURN(std::unique_ptr<jinja::Program> program, jinja::Parser::parse(source));
  return ChatTemplate(std::move(program), std::string(source));
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context,
                                         const TemplateOptions& options) const {
  if (!context.is_object()) return invalid_argument("the template context must be a JSON object");
  MET_ASSIGN_OR_RETURN(std::tm now, resolve_now(options.now_iso8601));
  jinja::Heap heap(options.max_heap_bytes);
  jinja::Runtime rt(heap, now, options.max_steps);
  jinja::Scope root(nullptr);
  MET_RETURN_IF_ERROR(jinja::install_globals(rt, root));
  for (const auto& [key, value] : context.items()) {
    MET_ASSIGN_OR_RETURN(jinja::Value name, heap.string(std::string_view(key)));
    MET_ASSIGN_OR_RETURN(jinja::Value v, jinja::value_from_json(heap, value));
    root.set(name.as_string(), v);
  }
  jinja::RenderLimits limits;
  limits.max_output_bytes = options.max_output_bytes;
  limits.max_macro_depth = options.max_recursion;
  limits.max_loop_iterations = options.max_loop_iterations;
  jinja::Interpreter interpreter(*program_, rt, limits);
  return interpreter.render(root);
}

bool is_template_exception(const Status& s) { return jinja::is_template_error(s); }

}  // namespace met
