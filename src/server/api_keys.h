// ApiKeys: the keys `met serve` accepts (--api-key, repeatable, and
// --api-key-file, one key per line) and the check of a request's
// `Authorization: Bearer <key>` header, or its `x-api-key: <key>` header
// (as Anthropic's clients send it), against them, and the tenant a key is
// accounted to (a key-file line "KEY TENANT").
// Invariants: no key is empty or holds whitespace; with no keys every request
// is authorized. The check compares against every key and does not stop at
// the first differing byte, so its time does not depend on how much of a key
// a guess got right (constant_time_equal).
// Threading: immutable after create(); any thread.
// Tested by tests/server/api_keys_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace met {

class ApiKeys {
 public:
  ApiKeys() = default;  // open: no key required
  // `keys` as given on the command line (`flag` names them in errors);
  // `key_file` "" for none. In the file, surrounding whitespace is trimmed,
  // blank lines and lines starting with '#' are skipped, and a line is a key
  // or a key, whitespace and its tenant (1 to 64 of A-Z a-z 0-9 . _ : @ -).
  static Result<ApiKeys> create(std::vector<std::string> keys, const std::string& key_file,
                                std::string_view flag = "--api-key");

  bool required() const { return !keys_.empty(); }
  size_t size() const { return keys_.size(); }
  // Whether `authorization` (the header's value, "" when absent) is
  // "Bearer <key>" for one of the keys; always true when none are required.
  bool authorizes(std::string_view authorization) const;
  // Whether `key` (an x-api-key header's value, "" when absent) is one of
  // the keys; always true when none are required.
  bool authorizes_key(std::string_view key) const;
  // The tenant of the key the request presents (as authorizes and
  // authorizes_key read the headers); "" when it has none or matches none.
  std::string tenant_of(std::string_view authorization, std::string_view x_api_key) const;

 private:
  // The index of the key `presented` is, if any (compared against every key).
  std::optional<size_t> find(std::string_view presented) const;

  std::vector<std::string> keys_;
  std::vector<std::string> tenants_;  // tenants_[i]: keys_[i]'s ("" none)
};

// a == b, in a time that depends on the lengths only.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace met
