// Parsing of the hub's file listings (hub_listing.h).
#include "hub/hub_listing.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace met {
namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::optional<uint64_t> size_field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<uint64_t>();
}

// A listed file's size and sha256 from its "size" and "lfs" fields.
void read_size_and_lfs(const json& entry, HubFile& f) {
  f.size = size_field(entry, "size");
  const auto lfs = entry.find("lfs");
  if (lfs == entry.end() || !lfs->is_object()) return;
  const auto oid = lfs->find("oid");
  if (oid != lfs->end() && oid->is_string() && is_sha256_hex(oid->get<std::string>())) {
    f.sha256 = lower(oid->get<std::string>());
  }
  if (std::optional<uint64_t> lfs_size = size_field(*lfs, "size")) f.size = lfs_size;
}

Result<json> parse_json(std::string_view text, std::string_view what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return data_loss("{}: the hub's answer is not JSON", what);
  return j;
}

}  // namespace

Result<std::vector<HubFile>> parse_tree_listing(std::string_view text) {
  MET_ASSIGN_OR_RETURN(const json j, parse_json(text, "file listing"));
  if (!j.is_array()) return data_loss("file listing: the hub's answer is not a JSON array");
  std::vector<HubFile> files;
  for (const json& entry : j) {
    if (!entry.is_object()) return data_loss("file listing: an entry is not a JSON object");
    const auto type = entry.find("type");
    const auto path = entry.find("path");
    if (type == entry.end() || !type->is_string() || path == entry.end() || !path->is_string()) {
      return data_loss("file listing: an entry lacks a string \"type\" or \"path\"");
    }
    if (type->get<std::string>() != "file") continue;
    HubFile f;
    f.path = path->get<std::string>();
    read_size_and_lfs(entry, f);
    files.push_back(std::move(f));
  }
  return files;
}

Result<std::vector<HubFile>> parse_model_siblings(std::string_view text) {
  MET_ASSIGN_OR_RETURN(const json j, parse_json(text, "model info"));
  const auto siblings = j.is_object() ? j.find("siblings") : j.end();
  if (siblings == j.end() || !siblings->is_array()) return data_loss("model info: no \"siblings\" array");
  std::vector<HubFile> files;
  for (const json& entry : *siblings) {
    const auto name = entry.is_object() ? entry.find("rfilename") : entry.end();
    if (name == entry.end() || !name->is_string()) return data_loss("model info: a sibling lacks \"rfilename\"");
    HubFile f;
    f.path = name->get<std::string>();
    read_size_and_lfs(entry, f);
    files.push_back(std::move(f));
  }
  return files;
}

std::string sha256_from_etag(std::string_view etag) {
  if (etag.substr(0, 2) == "W/") etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return is_sha256_hex(etag) ? lower(etag) : std::string();
}

}  // namespace met
