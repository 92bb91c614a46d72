// Checks DESIGN.md's module table: a file under src/<module>/ includes only
// headers of its own module or of modules above it in the table
// (`scheduler/` never includes `server/`; `backend/` never includes `scheduler/`).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

const std::vector<std::string> kModuleOrder = {
    "core", "gguf", "tensor", "backend", "model", "kv", "tokenizer", "chat",
    "sampling", "grammar", "spec", "scheduler", "engine", "server", "cli"};

// The first path component of `#include "module/..."`, if the line is one.
std::optional<std::string> included_module(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return std::nullopt;
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return std::nullopt;
  const size_t open = line.find('"', i + 7);
  if (open == std::string::npos) return std::nullopt;
  const size_t slash = line.find('/', open + 1);
  const size_t close = line.find('"', open + 1);
  if (slash == std::string::npos || close == std::string::npos || slash > close) return std::nullopt;
  return line.substr(open + 1, slash - open - 1);
}

int rank_of(const std::string& module) {
  auto it = std::find(kModuleOrder.begin(), kModuleOrder.end(), module);
  return it == kModuleOrder.end() ? -1 : static_cast<int>(it - kModuleOrder.begin());
}

TEST(Layering, EverySourceFolderIsAModuleOfTheTable) {
  for (const auto& entry : std::filesystem::directory_iterator(MET_SOURCE_DIR "/src")) {
    if (!entry.is_directory()) continue;
    EXPECT_GE(rank_of(entry.path().filename().string()), 0)
        << entry.path() << " is not in DESIGN.md's module table";
  }
}

TEST(Layering, ModulesIncludeOnlyModulesAboveThem) {
  int files_checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(MET_SOURCE_DIR "/src")) {
    if (!entry.is_regular_file()) continue;
    const auto rel = std::filesystem::relative(entry.path(), MET_SOURCE_DIR "/src");
    const std::string module = rel.begin()->string();
    const int own = rank_of(module);
    if (own < 0) continue;
    std::ifstream in(entry.path());
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      const std::optional<std::string> included = included_module(line);
      if (!included) continue;
      const int dep = rank_of(*included);
      if (dep < 0) continue;  // a third-party header such as "CLI/CLI.hpp" or a generated one
      EXPECT_LE(dep, own) << rel.string() << ":" << line_no << " includes " << *included
                          << "/, which is below " << module << "/ in DESIGN.md's table";
    }
    ++files_checked;
  }
  EXPECT_GT(files_checked, 0);
}

}  // namespace
