// `met top URL [--api-key KEY] [--interval SECONDS]`: the operator's terminal
// dashboard over a running `met serve` (src/top/). The key defaults to
// $MET_API_KEY, which apps/met/main.cc reads.
// Threading: main thread. Tested by tests/top/top_tmux_test.cc, which runs the
// built `met top` in a tmux pane.
#include <memory>
#include <string>

#include "cli/commands.h"
#include "top/top_loop.h"

namespace met {
namespace {

Status check_top_options(const top::TopOptions& o) {
  if (o.url.rfind("http://", 0) != 0 && o.url.rfind("https://", 0) != 0) {
    return invalid_argument("URL '{}' must start with http:// or https://", o.url);
  }
  if (!(o.interval_s >= 0.1 && o.interval_s <= 3600)) {
    return invalid_argument("--interval {} is not between 0.1 and 3600 seconds", o.interval_s);
  }
  return ok_status();
}

}  // namespace

void add_top_command(CLI::App& app, const std::string& env_api_key) {
  auto o = std::make_shared<top::TopOptions>();
  o->api_key = env_api_key;
  CLI::App* cmd = app.add_subcommand("top", "A live terminal dashboard of a running met serve (q quits, ? helps)");
  cmd->add_option("url", o->url, "The server, e.g. http://127.0.0.1:8080")->required();
  cmd->add_option("--api-key", o->api_key, "Its admin key (--admin-key), else an API key (env MET_API_KEY)");
  cmd->add_option("--interval", o->interval_s, "Seconds between polls")->capture_default_str();
  cmd->callback([o] {
    exit_on_error("top", check_top_options(*o));
    exit_on_error("top", top::run_top(*o));
  });
}

}  // namespace met
