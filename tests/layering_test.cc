// Checks DESIGN.md's module table: a file under src/<module>/ includes only
// headers of its own module or of modules above it in the table
// (`scheduler/` never includes `server/`; `backend/` never includes
// `scheduler/`); request/ (the engine's request API) sits between grammar/
// and scheduler/, and hf/ (Hugging Face folders opened as GGUF, which the
// engine and the CLI open model paths with) after tokenizer/; top/ (`met top`,
// a pure HTTP client) includes core/ alone. server/ never
// includes scheduler/, kv/, model/ or backend/, nor does cli/ but in its
// model and device tools.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

const std::vector<std::string> kModuleOrder = {
    "core", "gguf", "tensor", "backend", "model", "kv", "tokenizer", "hf", "chat",
    "sampling", "grammar", "request", "spec", "scheduler", "engine", "server", "hub", "top", "cli"};

// server/ and cli/ reach the engine through engine/ and request/ alone: they
// never include the modules the engine is built from.
const std::vector<std::string> kEngineInternals = {"scheduler", "kv", "model", "backend"};
// cli/ files that are model and device tools rather than engine clients: the
// device benchmark (and its prefill bound and phase tables), make-model,
// make-lora, quantize, convert, info, and serve's default model (made with
// make-model's code). Their engines, like run's, come from
// engine/cpu_engine.h.
const std::vector<std::string> kCliModelTools = {"bench_command.cc", "convert_command.cc", "make_model_command.cc",
                                                 "make_lora_command.cc",
                                                 "quantize_command.cc", "model_info.h", "model_info.cc",
                                                 "prefill_bound.h", "prefill_bound.cc", "bench_phases.h",
                                                 "bench_phases.cc", "serve_command.cc"};

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

// Calls fn(line_no, module) for each `#include "module/..."` line of `path`.
template <class Fn>
void for_each_included_module(const std::filesystem::path& path, Fn fn) {
  std::ifstream in(path);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (const std::optional<std::string> included = included_module(line)) fn(line_no, *included);
  }
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
    for_each_included_module(entry.path(), [&](int line_no, const std::string& included) {
      const int dep = rank_of(included);
      if (dep < 0) return;  // a third-party header such as "CLI/CLI.hpp" or a generated one
      EXPECT_LE(dep, own) << rel.string() << ":" << line_no << " includes " << included
                          << "/, which is below " << module << "/ in DESIGN.md's table";
    });
    ++files_checked;
  }
  EXPECT_GT(files_checked, 0);
}

// top/ (`met top`) is a pure HTTP client of the server: it includes core/ and
// itself, nothing of the engine or the server.
TEST(Layering, TheTopDashboardIsAPureHttpClient) {
  int files_checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(MET_SOURCE_DIR "/src/top")) {
    if (!entry.is_regular_file()) continue;
    for_each_included_module(entry.path(), [&](int line_no, const std::string& included) {
      EXPECT_TRUE(included == "core" || included == "top")
          << "top/" << entry.path().filename().string() << ":" << line_no << " includes " << included << "/";
    });
    ++files_checked;
  }
  EXPECT_GT(files_checked, 0);
}

TEST(Layering, TheServerAndTheCliReachTheEngineOnlyThroughItsApi) {
  int files_checked = 0;
  for (const char* module : {"server", "cli"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::string(MET_SOURCE_DIR "/src/") + module)) {
      if (!entry.is_regular_file()) continue;
      const std::string name = entry.path().filename().string();
      const bool tool = std::string(module) == "cli" &&
                        std::find(kCliModelTools.begin(), kCliModelTools.end(), name) != kCliModelTools.end();
      if (tool) continue;
      for_each_included_module(entry.path(), [&](int line_no, const std::string& included) {
        const bool internal =
            std::find(kEngineInternals.begin(), kEngineInternals.end(), included) != kEngineInternals.end();
        EXPECT_FALSE(internal) << module << "/" << name << ":" << line_no << " includes " << included
                               << "/: go through engine/ or request/";
      });
      ++files_checked;
    }
  }
  EXPECT_GT(files_checked, 0);
}

}  // namespace
