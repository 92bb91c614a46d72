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

void add_bench_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_make_model_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_run_command(CLI::App& app);
// `default_cache_dir`: where `met serve` keeps its default model (apps/ works
// it out from XDG_CACHE_HOME or HOME).
void add_serve_command(CLI::App& app, const std::string& default_cache_dir);
void add_template_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);

// Prints "met <command>: <message>" and throws CLI::RuntimeError(1) when `s`
// is not ok.
void exit_on_error(std::string_view command, const Status& s);

}  // namespace met
