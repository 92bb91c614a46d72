// Parsing and checking of hub references (hub_ref.h).
#include "hub/hub_ref.h"

#include <algorithm>
#include <cctype>

namespace met {
namespace {

constexpr size_t kMaxNameChars = 96;  // the hub's limit on an org or a repo name

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}

bool ends_with_gguf(std::string_view s) {
  constexpr std::string_view kExt = ".gguf";
  if (s.size() < kExt.size()) return false;
  return std::equal(kExt.begin(), kExt.end(), s.end() - static_cast<std::ptrdiff_t>(kExt.size()),
                    [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
}

// One of ORG and REPO; `what` is "organization" or "repo".
Status check_name(std::string_view ref, std::string_view name, std::string_view what) {
  if (name.empty()) return invalid_argument("'{}': the {} name is empty (expected ORG/REPO[:FILE])", ref, what);
  if (name.size() > kMaxNameChars) {
    return invalid_argument("'{}': the {} name is longer than {} characters", ref, what, kMaxNameChars);
  }
  if (!std::all_of(name.begin(), name.end(), is_name_char)) {
    return invalid_argument("'{}': the {} name '{}' may hold only letters, digits, '-', '_' and '.'", ref, what, name);
  }
  if (name.find("--") != std::string_view::npos || name.find("..") != std::string_view::npos) {
    return invalid_argument("'{}': the {} name '{}' may not contain '--' or '..'", ref, what, name);
  }
  if (name.front() == '-' || name.front() == '.' || name.back() == '-' || name.back() == '.') {
    return invalid_argument("'{}': the {} name '{}' may not begin or end with '-' or '.'", ref, what, name);
  }
  return ok_status();
}

Status check_file(std::string_view ref, std::string_view file) {
  if (file.front() == '/' || file.find('\\') != std::string_view::npos || file.find("//") != std::string_view::npos) {
    return invalid_argument("'{}': the file '{}' must be a relative path in the repo", ref, file);
  }
  size_t begin = 0;
  while (begin <= file.size()) {
    const size_t end = std::min(file.find('/', begin), file.size());
    const std::string_view part = file.substr(begin, end - begin);
    if (part == "." || part == "..")
      return invalid_argument("'{}': the file '{}' may not contain '{}'", ref, file, part);
    for (char c : part) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return invalid_argument("'{}': the file '{}' holds a control character", ref, file);
      }
    }
    begin = end + 1;
  }
  return ok_status();
}

Status check_tag(std::string_view ref, std::string_view tag) {
  const auto is_tag_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  };
  if (!std::all_of(tag.begin(), tag.end(), is_tag_char)) {
    return invalid_argument(
        "'{}': '{}' is neither a .gguf file nor a quant tag (letters, digits, '-', '_'; e.g. Q4_K_M)", ref, tag);
  }
  return ok_status();
}

}  // namespace

Result<HubRef> parse_hub_ref(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view repo = text.substr(0, colon);
  const size_t slash = repo.find('/');
  if (slash == std::string_view::npos) {
    return invalid_argument("'{}' is not a hub repo: expected ORG/REPO[:FILE] (e.g. Qwen/Qwen3-0.6B-GGUF)", text);
  }
  const std::string_view org = repo.substr(0, slash);
  const std::string_view name = repo.substr(slash + 1);
  if (name.find('/') != std::string_view::npos) {
    return invalid_argument("'{}': expected ORG/REPO with one '/'; put a file's folder after ':'", text);
  }
  MET_RETURN_IF_ERROR(check_name(text, org, "organization"));
  MET_RETURN_IF_ERROR(check_name(text, name, "repo"));
  HubRef ref;
  ref.repo = std::string(repo);
  if (colon == std::string_view::npos) return ref;
  const std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) return invalid_argument("'{}': nothing after ':' (expected a .gguf file or a quant tag)", text);
  if (ends_with_gguf(rest)) {
    MET_RETURN_IF_ERROR(check_file(text, rest));
    ref.file = std::string(rest);
  } else {
    MET_RETURN_IF_ERROR(check_tag(text, rest));
    ref.tag = std::string(rest);
  }
  return ref;
}

Status validate_revision(std::string_view text) {
  const bool chars_ok = std::all_of(text.begin(), text.end(), [](char c) { return is_name_char(c) || c == '/'; });
  if (text.empty() || !chars_ok || text.find("..") != std::string_view::npos || text.front() == '/' ||
      text.back() == '/') {
    return invalid_argument("revision '{}' is not a branch, tag or commit name", text);
  }
  return ok_status();
}

std::string to_string(const HubRef& ref) {
  if (!ref.file.empty()) return ref.repo + ":" + ref.file;
  if (!ref.tag.empty()) return ref.repo + ":" + ref.tag;
  return ref.repo;
}

}  // namespace met
