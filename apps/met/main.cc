// The `met` binary: parses the command line with CLI11 and runs a subcommand.
// The only place met reads environment variables (MET_ISA, MET_LOG_LEVEL,
// MET_CACHE, XDG_CACHE_HOME or HOME for the cache directory, HF_ENDPOINT
// and HF_TOKEN for the hub, and MET_API_KEY for `met top`).
// Threading: main thread. Tested by tests/cli/*_command_test.cc.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/version.h"
#include "core/cpu_features.h"
#include "core/log.h"

namespace {

// Applies --isa / MET_ISA before any kernel is chosen. Returns false (after
// printing why) on an unknown tier name.
bool apply_isa_cap(const std::string& flag) {
  std::string name = flag;
  if (name.empty()) {
    if (const char* env = std::getenv("MET_ISA"); env != nullptr) name = env;
  }
  if (name.empty()) return true;
  std::optional<met::Isa> isa = met::parse_isa(name);
  if (!isa) {
    std::fprintf(stderr, "met: --isa/MET_ISA '%s' is not scalar, avx2, avxvnni, avx512 or amx\n", name.c_str());
    return false;
  }
  met::set_isa_cap(*isa);
  return true;
}

// $MET_CACHE, else $XDG_CACHE_HOME/met, else $HOME/.cache/met, else .met-cache.
std::string default_cache_dir() {
  if (const char* met = std::getenv("MET_CACHE"); met != nullptr && met[0] != '\0') return met;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] != '\0') {
    return std::string(xdg) + "/met";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return std::string(home) + "/.cache/met";
  }
  return ".met-cache";
}

met::HubEnv hub_env() {
  met::HubEnv env;
  env.cache_dir = default_cache_dir();
  if (const char* endpoint = std::getenv("HF_ENDPOINT"); endpoint != nullptr && endpoint[0] != '\0') {
    env.hf_endpoint = endpoint;
  }
  if (const char* token = std::getenv("HF_TOKEN"); token != nullptr) env.hf_token = token;
  return env;
}

}  // namespace

int main(int argc, char** argv) {
  if (met::best_isa(met::detect_cpu_features()) == met::Isa::kScalar) {
    std::fprintf(stderr, "met: this CPU lacks AVX2/FMA/F16C, which met requires\n");
    return 1;
  }
  CLI::App app{"met: an LLM inference server for GGUF models"};
  app.require_subcommand(0, 1);
  std::string isa_flag;
  std::string log_level;
  app.add_option("--isa", isa_flag, "Cap the kernel tier: avx2, avxvnni, avx512 or amx (env MET_ISA)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (env MET_LOG_LEVEL)");
  bool show_version = false;
  app.add_flag("--version", show_version, "Print the version and the kernel tier, then exit");
  met::add_bench_command(app);
  met::add_convert_command(app);
  met::add_info_command(app);
  met::add_make_lora_command(app);
  met::add_make_model_command(app);
  const met::HubEnv hub = hub_env();
  met::add_pull_command(app, hub);
  met::add_quantize_command(app);
  met::add_run_command(app);
  met::add_serve_command(app, hub);
  met::add_template_command(app);
  met::add_tokenize_command(app);
  const char* api_key = std::getenv("MET_API_KEY");
  met::add_top_command(app, api_key != nullptr ? api_key : "");
  app.parse_complete_callback([&] {
    if (!apply_isa_cap(isa_flag)) throw CLI::RuntimeError(2);
    if (log_level.empty()) {
      const char* env = std::getenv("MET_LOG_LEVEL");
      log_level = env != nullptr ? env : "info";
    }
    if (!met::init_logging(log_level)) {
      std::fprintf(stderr, "met: --log-level '%s' is not a level\n", log_level.c_str());
      throw CLI::RuntimeError(2);
    }
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (show_version) {  // after --isa took effect, so the line names the tier that runs
    std::cout << met::version_line() << "\n";
    return 0;
  }
  if (app.get_subcommands().empty()) {
    std::fprintf(stderr, "met: a subcommand is required\n%s", app.help().c_str());
    return 2;
  }
  return 0;
}
