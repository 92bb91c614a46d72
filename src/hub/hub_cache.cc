// The download cache's layout (hub_cache.h).
#include "hub/hub_cache.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace met {
namespace {

namespace fs = std::filesystem;

// "refs/pr/1" -> "refs%2Fpr%2F1".
std::string revision_folder(std::string_view revision) {
  std::string out;
  for (char c : revision) {
    if (c == '/') {
      out += "%2F";
    } else {
      out += c;
    }
  }
  return out;
}

bool is_complete_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

}  // namespace

std::string HubCache::revision_dir(const HubRef& ref) const {
  // ORG/REPO -> ORG--REPO (hub names hold no "--", so this is one-to-one).
  const size_t slash = ref.repo.find('/');
  const std::string repo_folder = ref.repo.substr(0, slash) + "--" + ref.repo.substr(slash + 1);
  return (fs::path(root_) / "hub" / repo_folder / revision_folder(ref.revision)).string();
}

std::string HubCache::file_path(const HubRef& ref, std::string_view file) const {
  return (fs::path(revision_dir(ref)) / std::string(file)).string();
}

std::string HubCache::choice_path(const HubRef& ref) const {
  std::string tag = ref.tag.empty() ? std::string("@default") : ref.tag;
  std::transform(tag.begin(), tag.end(), tag.begin(), [](unsigned char c) { return std::tolower(c); });
  return (fs::path(revision_dir(ref)) / ".tags" / tag).string();
}

std::optional<std::string> HubCache::find_cached(const HubRef& ref) const {
  if (!ref.file.empty()) {
    const std::string path = file_path(ref, ref.file);
    if (is_complete_file(path)) return path;
    return std::nullopt;
  }
  std::ifstream in(choice_path(ref));
  std::string file;
  if (!in || !std::getline(in, file) || file.empty()) return std::nullopt;
  HubRef named = ref;
  named.tag.clear();
  named.file = file;
  Result<HubRef> checked = parse_hub_ref(to_string(named));  // a hand-edited record must not escape the cache
  if (!checked.ok()) return std::nullopt;
  const std::string path = file_path(ref, file);
  if (is_complete_file(path)) return path;
  return std::nullopt;
}

Status HubCache::record_choice(const HubRef& ref, std::string_view file) const {
  const std::string path = choice_path(ref);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return io_error("{}: cannot create the folder: {}", fs::path(path).parent_path().string(), ec.message());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << file << "\n";
    if (!out) return io_error("{}: cannot write", tmp);
  }
  fs::rename(tmp, path, ec);
  if (ec) return io_error("{}: cannot rename into place: {}", path, ec.message());
  return ok_status();
}

}  // namespace met
