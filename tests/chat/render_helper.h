// Test helper: renders a template string with a JSON context (and the fixed
// "now" of cases.jsonl) and returns the text, or "ERROR: <message>" so table
// tests can compare one string either way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/chat_template.h"

namespace met::testing {

inline std::string render_or_error(std::string_view source, std::string_view context_json = "{}",
                                   TemplateOptions options = {}) {
  if (!options.now_iso8601) options.now_iso8601 = "2026-07-26T09:30:00";
  auto tmpl = ChatTemplate::parse(source);
  if (!tmpl.ok()) return "ERROR: " + tmpl.status().message();
  auto out = tmpl->render(nlohmann::ordered_json::parse(context_json), options);
  if (!out.ok()) return "ERROR: " + out.status().message();
  return *out;
}

// A row of a table test: template, context, expected text (or "ERROR: …" prefix).
struct RenderCase {
  std::string_view source;
  std::string_view expected;
  std::string_view context = "{}";
};

// Renders each case; an expected "ERROR: X" matches any error starting with X.
inline void expect_renders(const std::vector<RenderCase>& cases) {
  for (const RenderCase& c : cases) {
    const std::string got = render_or_error(c.source, c.context);
    if (c.expected.starts_with("ERROR: ")) {
      EXPECT_TRUE(std::string_view(got).starts_with(c.expected)) << "template: " << c.source << "\ngot: " << got;
    } else {
      EXPECT_EQ(got, c.expected) << "template: " << c.source;
    }
  }
}

}  // namespace met::testing
