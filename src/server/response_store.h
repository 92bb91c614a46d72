// ResponseStore: the Responses API's responses kept in memory, so that
// `previous_response_id` can continue a conversation and GET
// /v1/responses/{id} can return one. Each entry holds the response object as
// sent and the conversation it ends (the earlier items, its input, its
// output: Responses items), so a chain survives its earlier links' eviction.
// Invariants: at most max_entries entries and about max_bytes bytes (their
// JSON text); the oldest entries are dropped first; an entry larger than
// max_bytes is not kept; putting an id again replaces its entry.
// Threading: every method may be called from any io thread (one mutex).
// Tested by tests/server/response_store_test.cc.
#pragma once

#include <cstddef>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/mutex.h"

namespace met {

struct StoredResponse {
  nlohmann::ordered_json response;      // the response object
  nlohmann::ordered_json conversation;  // Responses items: earlier ones, the input, the output
};

class ResponseStore {
 public:
  static constexpr size_t kDefaultMaxEntries = 1000;
  static constexpr size_t kDefaultMaxBytes = size_t{256} << 20;

  explicit ResponseStore(size_t max_entries = kDefaultMaxEntries, size_t max_bytes = kDefaultMaxBytes)
      : max_entries_(max_entries), max_bytes_(max_bytes) {}

  void put(const std::string& id, StoredResponse entry) EXCLUDES(mu_);
  std::optional<StoredResponse> get(const std::string& id) const EXCLUDES(mu_);
  // The output item `item_id` of a kept response (an input's item_reference);
  // nullopt when no kept response has it. Searches every entry's output.
  std::optional<nlohmann::ordered_json> find_item(const std::string& item_id) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);
  size_t bytes() const EXCLUDES(mu_);

 private:
  struct Entry {
    StoredResponse value;
    size_t bytes = 0;
  };
  // Drops the oldest entries until the bounds hold.
  void evict() REQUIRES(mu_);
  void erase(const std::string& id) REQUIRES(mu_);

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);
  std::deque<std::string> order_ GUARDED_BY(mu_);  // the entries' ids, oldest first
  size_t total_bytes_ GUARDED_BY(mu_) = 0;
};

}  // namespace met
