// The `met` subcommands: each add_*_command registers its options and its
// action on the CLI11 app. An action that fails prints one line,
// "met <command>: <what and where>", to stderr and exits non-zero (through
// CLI::RuntimeError, which apps/met/main.cc turns into the exit code).
// Threading: main thread. Tested by tests/cli/*_command_test.cc, which run the
// built `met` binary.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/status.h"

namespace met {

// What apps/ reads from the environment for the commands that keep or fetch
// models: the cache ($MET_CACHE, else $XDG_CACHE_HOME/met, else
// ~/.cache/met) and the hub ($HF_ENDPOINT, $HF_TOKEN).
struct HubEnv {
  std::string cache_dir;
  std::string hf_endpoint = "https://huggingface.co";
  std::string hf_token;  // never printed
};

void add_bench_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_make_lora_command(CLI::App& app);
void add_make_model_command(CLI::App& app);
void add_pull_command(CLI::App& app, const HubEnv& env);
void add_quantize_command(CLI::App& app);
void add_run_command(CLI::App& app);
// `env.cache_dir`: where `met serve` keeps its default model and the models
// --hf fetches.
void add_serve_command(CLI::App& app, const HubEnv& env);
void add_template_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
// `env_api_key`: $MET_API_KEY, the key `met top` sends when --api-key is not given.
void add_top_command(CLI::App& app, const std::string& env_api_key);

// Prints "met <command>: <message>" and throws CLI::RuntimeError(1) when `s`
// is not ok.
void exit_on_error(std::string_view command, const Status& s);

}  // namespace met
