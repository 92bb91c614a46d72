// ApiKeys. Tested by tests/server/api_keys_test.cc.
#include "server/api_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <utility>

namespace met {
namespace {

constexpr std::string_view kSpace = " \t\r\n\f\v";

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

Status check_key(std::string_view key, std::string_view where) {
  if (key.empty()) return invalid_argument("{}: an API key is empty", where);
  if (key.find_first_of(kSpace) != std::string_view::npos) {
    return invalid_argument("{}: an API key holds whitespace", where);
  }
  return ok_status();
}

// "KEY" or "KEY TENANT" of a trimmed key-file line.
Result<std::pair<std::string_view, std::string_view>> split_line(std::string_view line, std::string_view where) {
  const size_t gap = line.find_first_of(kSpace);
  if (gap == std::string_view::npos) return std::pair{line, std::string_view()};
  const std::string_view tenant = trim(line.substr(gap));
  const bool valid = tenant.size() <= 64 && std::all_of(tenant.begin(), tenant.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("._:@-").find(c) != std::string_view::npos;
  });
  if (!valid) {
    return invalid_argument("{}: a tenant is 1 to 64 of A-Z a-z 0-9 . _ : @ - (after the key and whitespace)", where);
  }
  return std::pair{line.substr(0, gap), tenant};
}

// Parses a bearer header's value down to its key; nullopt when it is not "Bearer <key>".
std::optional<std::string_view> bearer_key(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() < kBearer.size()) return std::nullopt;
  // The scheme is case-insensitive (RFC 9110); the key is not.
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kBearer[i]))) {
      return std::nullopt;
    }
  }
  return authorization.substr(kBearer.size());
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Walks all of b whatever a holds; differences are ORed, never branched on.
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < b.size(); ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    diff |= x ^ static_cast<unsigned char>(b[i]);
  }
  return diff == 0;
}

Result<ApiKeys> ApiKeys::create(std::vector<std::string> keys, const std::string& key_file, std::string_view flag) {
  ApiKeys out;
  for (std::string& k : keys) {
    MET_RETURN_IF_ERROR(check_key(k, flag));
    out.keys_.push_back(std::move(k));
    out.tenants_.emplace_back();
  }
  if (key_file.empty()) return out;
  std::ifstream in(key_file);
  if (!in) return io_error("--api-key-file: cannot read '{}'", key_file);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    const std::string_view trimmed = trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    const std::string where = fmt::format("--api-key-file {} line {}", key_file, line_no);
    MET_ASSIGN_OR_RETURN(const auto parts, split_line(trimmed, where));
    MET_RETURN_IF_ERROR(check_key(parts.first, where));
    out.keys_.emplace_back(parts.first);
    out.tenants_.emplace_back(parts.second);
  }
  if (out.keys_.empty()) return invalid_argument("--api-key-file {} holds no key", key_file);
  return out;
}

bool ApiKeys::authorizes(std::string_view authorization) const {
  if (keys_.empty()) return true;
  const std::optional<std::string_view> key = bearer_key(authorization);
  return key.has_value() && authorizes_key(*key);
}

bool ApiKeys::authorizes_key(std::string_view key) const { return keys_.empty() || find(key).has_value(); }

std::optional<size_t> ApiKeys::find(std::string_view key) const {
  const std::string_view presented = trim(key);
  std::optional<size_t> match;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (constant_time_equal(presented, keys_[i]) && !match) match = i;
  }
  return match;
}

std::string ApiKeys::tenant_of(std::string_view authorization, std::string_view x_api_key) const {
  std::optional<size_t> i;
  if (const std::optional<std::string_view> key = bearer_key(authorization)) i = find(*key);
  if (!i) i = find(x_api_key);
  return i.has_value() ? tenants_[*i] : std::string();
}

}  // namespace met
