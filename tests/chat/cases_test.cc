// Renders every row of ../shared/chat-templates/cases.jsonl (expected
// renderings made by Python's Jinja2 3.1.6 the way Hugging Face renders) and
// requires byte-identical output; rows where the template raised
// (TemplateError) must fail the same way. Other error rows show where Jinja2's
// sandbox stops; met may render further there.
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using Json = nlohmann::ordered_json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string shorten(const std::string& s) { return s.size() > 400 ? s.substr(0, 400) + "…" : s; }

// The first differing byte, for the failure report.
std::string first_difference(const std::string& want, const std::string& got) {
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  const size_t from = i > 40 ? i - 40 : 0;
  return "at byte " + std::to_string(i) + ": want " + Json(want.substr(from, 100)).dump() + "\n      got  " +
         Json(got.substr(from, 100)).dump();
}

TEST(ChatTemplateCases, EveryRowRendersAsJinja2Does) {
  MET_REQUIRE_SHARED(path, "chat-templates/cases.jsonl");
  const std::string dir = path.substr(0, path.rfind('/') + 1);
  std::ifstream in(path);
  TemplateOptions options;
  options.now_iso8601 = "2026-07-26T09:30:00";
  std::map<std::string, std::optional<ChatTemplate>> templates;
  std::vector<std::string> failures;
  int checked = 0;
  int passed = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const Json row = Json::parse(line);
    const std::string name = row["template"].get<std::string>();
    const std::string label = name + " / " + row["case"].get<std::string>();
    auto it = templates.find(name);
    if (it == templates.end()) {
      auto parsed = ChatTemplate::parse(read_file(dir + name));
      if (!parsed.ok()) failures.push_back(label + ": parse failed: " + parsed.status().message());
      it = templates.emplace(name, parsed.ok() ? std::optional(std::move(parsed).value()) : std::nullopt).first;
    }
    const bool wants_output = row.contains("expected");
    const bool wants_raise = !wants_output && row["error"].get<std::string>().rfind("TemplateError", 0) == 0;
    if (!wants_output && !wants_raise) continue;  // Jinja2's sandbox stopped; met may go further
    ++checked;
    if (!it->second) continue;
    auto rendered = it->second->render(row["context"], options);
    if (wants_output) {
      const std::string want = row["expected"].get<std::string>();
      if (!rendered.ok()) {
        failures.push_back(label + ": failed: " + rendered.status().message());
      } else if (*rendered != want) {
        failures.push_back(label + ": differs " + first_difference(want, *rendered));
      } else {
        ++passed;
      }
    } else if (rendered.ok() || !is_template_exception(rendered.status())) {
      failures.push_back(label + ": should raise " + row["error"].get<std::string>() + ", got " +
                         (rendered.ok() ? "output " + shorten(*rendered) : rendered.status().message()));
    } else {
      ++passed;
    }
  }
  std::cout << passed << "/" << checked << " rows rendered identically\n";
  for (const std::string& f : failures) std::cout << "  FAIL " << f << "\n";
  EXPECT_EQ(passed, checked);
  EXPECT_TRUE(failures.empty());
}

}  // namespace
}  // namespace met
