// `met pull ORG/REPO[:FILE.gguf|:QUANT] [--cache-dir DIR] [--hf-endpoint URL]
// [--hf-revision REV]`: fetches a GGUF from a Hugging Face-style hub into
// the cache (resuming a partial download, checking the hub's sha256) and
// prints its path on stdout; a model already cached is found without the
// network. The token comes from HF_TOKEN.
// Threading: main thread. Tested by tests/cli/pull_command_test.cc.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/hub_flags.h"

namespace met {
namespace {

struct PullOptions {
  HubFlags hub;
  std::string cache_dir;
};

Status pull(const PullOptions& o) {
  MET_ASSIGN_OR_RETURN(const std::string path, fetch_hub_model(o.hub, o.cache_dir));
  std::printf("%s\n", path.c_str());
  return ok_status();
}

}  // namespace

void add_pull_command(CLI::App& app, const HubEnv& env) {
  auto o = std::make_shared<PullOptions>();
  o->cache_dir = env.cache_dir;
  CLI::App* cmd = app.add_subcommand("pull", "Download a GGUF from a Hugging Face-style hub into the cache");
  cmd->add_option("ref", o->hub.hf, "ORG/REPO[:FILE.gguf|:QUANT] (default quant Q4_K_M, else the first GGUF)")
      ->required();
  cmd->add_option("--cache-dir", o->cache_dir, "The cache (env MET_CACHE)")->capture_default_str();
  add_hub_flags(*cmd, o->hub, env, /*with_hf=*/false);
  cmd->callback([o] { exit_on_error("pull", pull(*o)); });
}

}  // namespace met
