// The hub flags and the download's display on stderr (hub_flags.h).
#include "cli/hub_flags.h"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/progress_bar.h"
#include "hub/hub_client.h"

namespace met {
namespace {

std::string mib(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

// Shows one download: a bar on a terminal; else a line per tenth.
class DownloadDisplay {
 public:
  void start(const PullStart& s) {
    file_ = s.file;
    const std::string size = s.size ? " (" + mib(*s.size) + ")" : "";
    if (s.part_bytes > 0) {
      std::fprintf(stderr, "met: resuming %s%s at %s from %s\n", s.file.c_str(), size.c_str(),
                   mib(s.part_bytes).c_str(), s.url.c_str());
    } else {
      std::fprintf(stderr, "met: downloading %s%s from %s\n", s.file.c_str(), size.c_str(), s.url.c_str());
    }
    if (isatty(2) == 1) bar_ = std::make_unique<ProgressBar>("downloading " + s.file);
  }
  void progress(uint64_t done, uint64_t total) {
    if (bar_) {
      bar_->update(static_cast<size_t>(done), static_cast<size_t>(total));
      return;
    }
    if (total == 0) return;
    const int tenth = static_cast<int>(10 * done / total);
    if (tenth <= last_tenth_) return;
    last_tenth_ = tenth;
    std::fprintf(stderr, "met: %s: %d%% (%s of %s)\n", file_.c_str(), 10 * tenth, mib(done).c_str(),
                 mib(total).c_str());
  }
  void finish() { bar_.reset(); }  // ends the bar's line

 private:
  std::string file_;
  std::unique_ptr<ProgressBar> bar_;
  int last_tenth_ = 0;
};

}  // namespace

void add_hub_flags(CLI::App& cmd, HubFlags& flags, const HubEnv& env, bool with_hf) {
  flags.endpoint = env.hf_endpoint;
  flags.token = env.hf_token;
  if (with_hf) {
    cmd.add_option("--hf", flags.hf,
                   "Fetch the model from the hub: ORG/REPO[:FILE.gguf|:QUANT] (default quant Q4_K_M), kept in "
                   "--cache-dir (token from HF_TOKEN)");
  }
  cmd.add_option("--hf-endpoint", flags.endpoint, "The hub's URL (env HF_ENDPOINT)")->capture_default_str();
  cmd.add_option("--hf-revision", flags.revision, "The repo's branch, tag or commit")->capture_default_str();
}

Result<std::string> fetch_hub_model(const HubFlags& flags, const std::string& cache_dir) {
  MET_ASSIGN_OR_RETURN(HubRef ref, parse_hub_ref(flags.hf));
  ref.revision = flags.revision;
  HubOptions options;
  options.endpoint = flags.endpoint;
  options.token = flags.token;
  options.cache_dir = cache_dir;
  DownloadDisplay display;
  PullEvents events;
  events.on_start = [&](const PullStart& s) { display.start(s); };
  events.on_progress = [&](uint64_t done, uint64_t total) { display.progress(done, total); };
  Result<PullResult> pulled = pull_model(ref, options, events);
  display.finish();
  if (!pulled.ok()) return pulled.status().with_prefix(to_string(ref));
  if (!pulled->from_cache) {
    std::fprintf(stderr, "met: %s %s\n", pulled->verified ? "sha256 verified:" : "the hub states no sha256 for",
                 pulled->path.c_str());
  }
  return pulled->path;
}

}  // namespace met
