// HubFlags: the flags of the commands that fetch a model from a Hugging
// Face-style hub (`met pull`, `met serve --hf`): --hf-endpoint and
// --hf-revision (and --hf where the command also takes a model path), with
// their defaults from the environment apps/ read (HubEnv); and
// fetch_hub_model(), which gets the model into the cache (src/hub) and shows
// the download on stderr: a progress bar on a terminal, plain lines
// otherwise.
// Invariants: the token comes only from HF_TOKEN (never a flag, which `ps`
// would show) and is never printed.
// Threading: main thread. Tested by tests/cli/pull_command_test.cc, which
// runs the built `met` against a local hub.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/status.h"

namespace met {

struct HubFlags {
  std::string hf;            // ORG/REPO[:FILE|:TAG]; empty: not given
  std::string endpoint;      // --hf-endpoint
  std::string revision = "main";
  std::string token;         // from HF_TOKEN
};

// Registers --hf-endpoint and --hf-revision (and --hf when `with_hf`) on
// `cmd`, writing into `flags`, which outlives it; defaults from `env`.
void add_hub_flags(CLI::App& cmd, HubFlags& flags, const HubEnv& env, bool with_hf);

// The cached path of the model flags.hf names, downloaded into `cache_dir`
// first when it is not there yet.
Result<std::string> fetch_hub_model(const HubFlags& flags, const std::string& cache_dir);

}  // namespace met
