// pull_model: gets the GGUF a hub ref names into the cache and returns its
// path. A file already complete in the cache (named, or chosen by the same
// tag before) is returned with no network access at all; otherwise the repo's
// files are listed (the tree API), one is chosen (gguf_choice.h), and it is
// downloaded from {endpoint}/{repo}/resolve/{revision}/{file} into FILE.part
// (resumed when an earlier run left one), checked against the hub's sha256
// and only then renamed into place.
// Invariants: the cache's final paths hold only verified, complete files;
// the token is sent, never shown.
// Threading: one thread per call. Tested by tests/hub/hub_client_test.cc
// against a local HTTP server that answers the hub's URL shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "hub/http_download.h"
#include "hub/hub_ref.h"

namespace met {

inline constexpr std::string_view kDefaultHubEndpoint = "https://huggingface.co";

struct HubOptions {
  std::string endpoint = std::string(kDefaultHubEndpoint);
  std::string token;      // sent as "Authorization: Bearer …"; empty: none
  std::string cache_dir;  // the cache root (hub_cache.h)
  int max_attempts = 3;   // transfers per download; each later one resumes
  std::string user_agent = "met";
};

// A download about to start (not reported when the file is cached).
struct PullStart {
  std::string url;               // the resolve URL
  std::string file;              // the file's path in the repo
  std::string path;              // where it will be kept
  std::optional<uint64_t> size;  // bytes, when listed
  uint64_t part_bytes = 0;       // already in FILE.part from an earlier run
};

struct PullEvents {
  std::function<void(const PullStart&)> on_start;
  DownloadProgressFn on_progress;
};

struct PullResult {
  std::string path;         // the complete file in the cache
  bool from_cache = false;  // true: already complete in the cache, not downloaded
  bool verified = false;    // the sha256 was checked (always, unless the hub stated none)
  std::string sha256;       // of the downloaded bytes; empty when from the cache
};

Result<PullResult> pull_model(const HubRef& ref, const HubOptions& options, const PullEvents& events = {});

// {endpoint}/{repo}/resolve/{revision}/{file}, each part percent-encoded.
std::string hub_resolve_url(std::string_view endpoint, const HubRef& ref, std::string_view file);
// {endpoint}/api/models/{repo}/tree/{revision}?recursive=true
std::string hub_tree_url(std::string_view endpoint, const HubRef& ref);

}  // namespace met
