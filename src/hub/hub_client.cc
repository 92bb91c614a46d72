// Listing, choice and download of a hub ref's GGUF into the cache
// (hub_client.h).
#include "hub/hub_client.h"

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "hub/gguf_choice.h"
#include "hub/hub_cache.h"
#include "hub/hub_listing.h"

namespace met {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxListingBytes = size_t{32} << 20;

// Percent-encodes all but RFC 3986's unreserved characters (and '/' when
// `keep_slash`).
std::string url_escape(std::string_view s, bool keep_slash) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

std::string_view without_trailing_slash(std::string_view endpoint) {
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.remove_suffix(1);
  return endpoint;
}

HttpOptions http_options(const HubOptions& o) {
  HttpOptions h;
  h.bearer_token = o.token;
  h.user_agent = o.user_agent;
  return h;
}

Result<std::vector<HubFile>> list_files(const HubRef& ref, const HubOptions& o) {
  const std::string url = hub_tree_url(o.endpoint, ref);
  MET_ASSIGN_OR_RETURN(const HttpText answer, http_get_text(url, http_options(o), kMaxListingBytes));
  Result<std::vector<HubFile>> files = parse_tree_listing(answer.body);
  if (!files.ok()) return files.status().with_prefix(url);
  return files;
}

uint64_t part_size(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

// Downloads `file` of `ref`'s repo to its final path in `cache`.
Result<PullResult> download(const HubRef& ref, const HubFile& file, const HubCache& cache, const HubOptions& o,
                            const PullEvents& events) {
  PullStart start;
  start.url = hub_resolve_url(o.endpoint, ref, file.path);
  start.file = file.path;
  start.path = cache.file_path(ref, file.path);
  start.size = file.size;
  const std::string part = cache.part_path(ref, file.path);
  start.part_bytes = part_size(part);
  if (events.on_start) events.on_start(start);
  DownloadRequest req;
  req.url = start.url;
  req.part_path = part;
  req.expected_sha256 = file.sha256;
  req.expected_size = file.size;
  req.max_attempts = o.max_attempts;
  MET_ASSIGN_OR_RETURN(const DownloadResult got, download_file(req, http_options(o), events.on_progress));
  std::error_code ec;
  fs::rename(part, start.path, ec);
  if (ec) return io_error("{}: cannot rename into place: {}", start.path, ec.message());
  PullResult r;
  r.path = start.path;
  r.verified = got.verified;
  r.sha256 = got.sha256;
  return r;
}

}  // namespace

std::string hub_resolve_url(std::string_view endpoint, const HubRef& ref, std::string_view file) {
  return fmt::format("{}/{}/resolve/{}/{}", without_trailing_slash(endpoint), url_escape(ref.repo, true),
                     url_escape(ref.revision, false), url_escape(file, true));
}

std::string hub_tree_url(std::string_view endpoint, const HubRef& ref) {
  return fmt::format("{}/api/models/{}/tree/{}?recursive=true", without_trailing_slash(endpoint),
                     url_escape(ref.repo, true), url_escape(ref.revision, false));
}

Result<PullResult> pull_model(const HubRef& ref, const HubOptions& o, const PullEvents& events) {
  MET_RETURN_IF_ERROR(validate_revision(ref.revision));
  if (o.cache_dir.empty()) return invalid_argument("no cache directory to keep downloaded models in");
  const HubCache cache(o.cache_dir);
  if (std::optional<std::string> cached = cache.find_cached(ref)) {
    PullResult r;
    r.path = *cached;
    r.from_cache = true;
    r.verified = true;  // it was checked before it was renamed into place
    return r;
  }
  MET_ASSIGN_OR_RETURN(const std::vector<HubFile> files, list_files(ref, o));
  MET_ASSIGN_OR_RETURN(const HubFile file, choose_gguf(files, ref));
  PullResult r;
  const std::string final_path = cache.file_path(ref, file.path);
  std::error_code ec;
  if (fs::is_regular_file(final_path, ec)) {
    r.path = final_path;  // pulled before under another name or tag
    r.from_cache = true;
    r.verified = true;
  } else {
    MET_ASSIGN_OR_RETURN(r, download(ref, file, cache, o, events));
  }
  if (ref.file.empty()) MET_RETURN_IF_ERROR(cache.record_choice(ref, file.path));
  return r;
}

}  // namespace met
