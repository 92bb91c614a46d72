// ApiKeys. Tested by tests/server/api_keys_test.cc.
#include "server/api_keys.h"

#include <fmt/format.h>

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

Result<ApiKeys> ApiKeys::create(std::vector<std::string> keys, const std::string& key_file) {
  ApiKeys out;
  for (std::string& k : keys) {
    MET_RETURN_IF_ERROR(check_key(k, "--api-key"));
    out.keys_.push_back(std::move(k));
  }
  if (key_file.empty()) return out;
  std::ifstream in(key_file);
  if (!in) return io_error("--api-key-file: cannot read '{}'", key_file);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    const std::string_view key = trim(line);
    if (key.empty() || key.front() == '#') continue;
    MET_RETURN_IF_ERROR(check_key(key, fmt::format("--api-key-file {} line {}", key_file, line_no)));
    out.keys_.emplace_back(key);
  }
  if (out.keys_.empty()) return invalid_argument("--api-key-file {} holds no key", key_file);
  return out;
}

bool ApiKeys::authorizes(std::string_view authorization) const {
  if (keys_.empty()) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() < kBearer.size()) return false;
  // The scheme is case-insensitive (RFC 9110); the key is not.
  for (size_t i = 0; i < kBearer.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
        std::tolower(static_cast<unsigned char>(kBearer[i]))) {
      return false;
    }
  }
  return authorizes_key(authorization.substr(kBearer.size()));
}

bool ApiKeys::authorizes_key(std::string_view key) const {
  if (keys_.empty()) return true;
  const std::string_view presented = trim(key);
  bool match = false;
  for (const std::string& k : keys_) match |= constant_time_equal(presented, k);
  return match;
}

}  // namespace met
