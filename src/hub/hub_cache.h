// HubCache: where downloaded models live under a cache root (met's
// --cache-dir), shared by every run:
//   ROOT/hub/ORG--REPO/REVISION/FILE        a complete, verified file
//   ROOT/hub/ORG--REPO/REVISION/FILE.part   a download in progress (resumable)
//   ROOT/hub/ORG--REPO/REVISION/.tags/TAG   the file a tag (or "@default") chose
// so a cached model is found with no network access at all.
// Invariants: a file at its final path is complete and its sha256 was
// checked (downloads are renamed there only after the check); a '/' in a
// revision is written "%2F" so a revision is one folder.
// Threading: plain values. Two processes never write one part file: the
// download holds a lock on it (http_download.h), and a second one fails.
// Tested by tests/hub/hub_cache_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "hub/hub_ref.h"

namespace met {

class HubCache {
 public:
  explicit HubCache(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  // ROOT/hub/ORG--REPO/REVISION
  std::string revision_dir(const HubRef& ref) const;
  // Where `file` of `ref`'s repo and revision is kept once complete.
  std::string file_path(const HubRef& ref, std::string_view file) const;
  // Where it is written while it downloads.
  std::string part_path(const HubRef& ref, std::string_view file) const { return file_path(ref, file) + ".part"; }

  // The complete cached file `ref` names (its file, or the one its tag chose
  // last time), found without any network access; nullopt when not cached.
  std::optional<std::string> find_cached(const HubRef& ref) const;
  // Remembers that `ref`'s tag (or the default choice) chose `file`.
  Status record_choice(const HubRef& ref, std::string_view file) const;

 private:
  std::string choice_path(const HubRef& ref) const;

  std::string root_;
};

}  // namespace met
