// HubFile and the hub's file listings: the tree API's JSON array
// (GET {endpoint}/api/models/{repo}/tree/{revision}?recursive=true:
// [{"type":"file","path":...,"size":...,"lfs":{"oid":SHA256,"size":...}}, ...])
// and the model API's "siblings" ({"siblings":[{"rfilename":...}, ...]}).
// Invariants: only files are listed (folders dropped), in the order the hub
// gave; sha256 is 64 lower-case hex digits or empty (not an LFS file, so the
// hub states no sha256 for it).
// Threading: pure functions. Tested by tests/hub/hub_listing_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace met {

struct HubFile {
  std::string path;              // in the repo, e.g. "Q4_K_M/model-Q4_K_M.gguf"
  std::optional<uint64_t> size;  // bytes, when listed
  std::string sha256;            // the LFS oid; empty when the hub gives none
};

// The tree API's answer. The message says what is malformed.
Result<std::vector<HubFile>> parse_tree_listing(std::string_view json);

// The model API's answer (its "siblings"; sizes and sha256 when it gives them).
Result<std::vector<HubFile>> parse_model_siblings(std::string_view json);

// A sha256 as the hub writes it in an ETag or X-Linked-Etag header
// ("\"abc…\"", W/"abc…"): the 64 lower-case hex digits, or empty when the
// value is no sha256 (a git blob's sha1 for a non-LFS file, a storage ETag).
std::string sha256_from_etag(std::string_view etag);

}  // namespace met
