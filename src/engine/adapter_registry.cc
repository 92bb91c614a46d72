// AdapterRegistry. Tested by tests/engine/adapter_registry_test.cc.
#include "engine/adapter_registry.h"

#include <algorithm>

namespace met {

Status AdapterRegistry::load(const std::string& name, const std::string& path) {
  if (name.empty()) return invalid_argument("an adapter needs a name");
  {
    MutexLock lock(mu_);
    const auto taken = std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
    if (taken) return invalid_argument("an adapter named '{}' is loaded already", name);
    if (entries_.size() >= kMaxLoadedAdapters) {
      return invalid_argument("{} adapters are loaded, the most a server keeps; unload one first", entries_.size());
    }
  }
  MET_ASSIGN_OR_RETURN(std::shared_ptr<const LoraAdapter> adapter, loader_(path, name));
  MutexLock lock(mu_);
  // Checked again: another load of the name may have won while the file was read.
  const auto taken = std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
  if (taken) return invalid_argument("an adapter named '{}' is loaded already", name);
  entries_.push_back(Entry{name, path, next_id_++, std::move(adapter)});
  return ok_status();
}

Status AdapterRegistry::unload(std::string_view name) {
  MutexLock lock(mu_);
  const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
  if (it == entries_.end()) return not_found("no adapter named '{}' is loaded", name);
  entries_.erase(it);
  return ok_status();
}

std::optional<AdapterRegistry::Entry> AdapterRegistry::find(std::string_view name) const {
  MutexLock lock(mu_);
  const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
  if (it == entries_.end()) return std::nullopt;
  return *it;
}

std::vector<AdapterRegistry::Entry> AdapterRegistry::list() const {
  MutexLock lock(mu_);
  return entries_;
}

Result<std::pair<std::string, std::string>> parse_lora_flag(std::string_view flag) {
  const size_t eq = flag.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == flag.size()) {
    return invalid_argument("--lora '{}': expected NAME=PATH", flag);
  }
  return std::pair{std::string(flag.substr(0, eq)), std::string(flag.substr(eq + 1))};
}

}  // namespace met
