// The GGUF file choice (gguf_choice.h).
#include "hub/gguf_choice.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace met {
namespace {

constexpr size_t kMaxListedFiles = 24;  // in a message

char lower_char(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
bool is_alnum_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool contains_ci(std::string_view hay, std::string_view needle, size_t at) {
  if (at + needle.size() > hay.size()) return false;
  for (size_t i = 0; i < needle.size(); ++i) {
    if (lower_char(hay[at + i]) != lower_char(needle[i])) return false;
  }
  return true;
}

bool is_projector(std::string_view path) {
  const std::string_view name = base_name(path);
  for (size_t i = 0; i < name.size(); ++i) {
    if (contains_ci(name, "mmproj", i)) return true;
  }
  return false;
}

// "a.gguf, b.gguf, … and 3 more", or "none".
std::string gguf_list(const std::vector<HubFile>& files) {
  std::vector<std::string> names;
  for (const HubFile& f : files) {
    if (is_gguf_path(f.path)) names.push_back(f.path);
  }
  if (names.empty()) return "none";
  const size_t shown = std::min(names.size(), kMaxListedFiles);
  std::string out =
      fmt::format("{}", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "));
  if (shown < names.size()) out += fmt::format(", … and {} more", names.size() - shown);
  return out;
}

Status refuse_split(const HubRef& ref, const HubFile& f) {
  return unimplemented(
      "{}: {} is one part of a split GGUF; met loads single-file GGUFs only (pick another quant, or download the "
      "parts and join them with llama.cpp's llama-gguf-split --merge)",
      ref.repo, f.path);
}

// The first of `matches` that is one file, else a refusal naming the split one.
Result<HubFile> first_single(const std::vector<const HubFile*>& matches, const HubRef& ref) {
  for (const HubFile* f : matches) {
    if (!is_split_gguf(f->path)) return *f;
  }
  return refuse_split(ref, *matches.front());
}

}  // namespace

bool is_gguf_path(std::string_view path) {
  const std::string_view name = base_name(path);
  constexpr std::string_view kExt = ".gguf";
  return name.size() > kExt.size() && contains_ci(name, kExt, name.size() - kExt.size());
}

bool is_split_gguf(std::string_view path) {
  // "-NNNNN-of-NNNNN.gguf": 21 characters before the end.
  constexpr std::string_view kShape = "-00000-of-00000.gguf";
  const std::string_view name = base_name(path);
  if (name.size() <= kShape.size()) return false;
  const std::string_view tail = name.substr(name.size() - kShape.size());
  for (size_t i = 0; i < kShape.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(tail[i])) != 0;
    if (kShape[i] == '0' ? !digit : lower_char(tail[i]) != kShape[i]) return false;
  }
  return true;
}

bool name_has_quant_tag(std::string_view path, std::string_view tag) {
  if (tag.empty()) return false;
  const std::string_view name = base_name(path);
  for (size_t at = 0; at + tag.size() <= name.size(); ++at) {
    if (!contains_ci(name, tag, at)) continue;
    const bool starts_word = at == 0 || !is_alnum_char(name[at - 1]);
    const size_t end = at + tag.size();
    const bool ends_word = end == name.size() || (!is_alnum_char(name[end]) && name[end] != '_');
    if (starts_word && ends_word) return true;
  }
  return false;
}

Result<HubFile> choose_gguf(const std::vector<HubFile>& files, const HubRef& ref) {
  if (!ref.file.empty()) {
    const auto it = std::find_if(files.begin(), files.end(), [&](const HubFile& f) { return f.path == ref.file; });
    if (it == files.end()) {
      return not_found("{} (revision {}) has no file '{}'; its GGUFs: {}", ref.repo, ref.revision, ref.file,
                       gguf_list(files));
    }
    if (is_split_gguf(it->path)) return refuse_split(ref, *it);
    return *it;
  }
  std::vector<const HubFile*> models;
  for (const HubFile& f : files) {
    if (is_gguf_path(f.path) && !is_projector(f.path)) models.push_back(&f);
  }
  if (models.empty()) return not_found("{} (revision {}) has no .gguf model file", ref.repo, ref.revision);
  const std::string_view tag = ref.tag.empty() ? kDefaultQuantTag : std::string_view(ref.tag);
  std::vector<const HubFile*> matches;
  for (const HubFile* f : models) {
    if (name_has_quant_tag(f->path, tag)) matches.push_back(f);
  }
  if (!matches.empty()) return first_single(matches, ref);
  if (!ref.tag.empty()) {
    return not_found("no .gguf file of {} (revision {}) matches the tag '{}'; its GGUFs: {}", ref.repo, ref.revision,
                     ref.tag, gguf_list(files));
  }
  return first_single(models, ref);
}

}  // namespace met
