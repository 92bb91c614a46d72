// ResponseStore. Tested by tests/server/response_store_test.cc.
#include "server/response_store.h"

#include <algorithm>
#include <utility>

namespace met {
namespace {

size_t stored_bytes(const std::string& id, const StoredResponse& r) {
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  return id.size() + r.response.dump(-1, ' ', false, kReplace).size() +
         r.conversation.dump(-1, ' ', false, kReplace).size();
}

}  // namespace

void ResponseStore::put(const std::string& id, StoredResponse entry) {
  const size_t bytes = stored_bytes(id, entry);
  MutexLock lock(mu_);
  erase(id);
  if (bytes > max_bytes_ || max_entries_ == 0) return;
  entries_.emplace(id, Entry{std::move(entry), bytes});
  order_.push_back(id);
  total_bytes_ += bytes;
  evict();
}

// A replaced id is rare (ids are unique per response): a linear search.
void ResponseStore::erase(const std::string& id) {
  const auto it = entries_.find(id);
  if (it == entries_.end()) return;
  total_bytes_ -= it->second.bytes;
  entries_.erase(it);
  order_.erase(std::find(order_.begin(), order_.end(), id));
}

void ResponseStore::evict() {
  while (!order_.empty() && (entries_.size() > max_entries_ || total_bytes_ > max_bytes_)) {
    const auto it = entries_.find(order_.front());
    total_bytes_ -= it->second.bytes;
    entries_.erase(it);
    order_.pop_front();
  }
}

std::optional<StoredResponse> ResponseStore::get(const std::string& id) const {
  MutexLock lock(mu_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.value;
}

std::optional<nlohmann::ordered_json> ResponseStore::find_item(const std::string& item_id) const {
  MutexLock lock(mu_);
  for (const auto& [id, e] : entries_) {
    const auto output = e.value.response.find("output");
    if (output == e.value.response.end() || !output->is_array()) continue;
    for (const auto& item : *output) {
      const auto it = item.find("id");
      if (it != item.end() && *it == item_id) return item;
    }
  }
  return std::nullopt;
}

size_t ResponseStore::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}

size_t ResponseStore::bytes() const {
  MutexLock lock(mu_);
  return total_bytes_;
}

}  // namespace met
