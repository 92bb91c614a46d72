// AdapterRegistry: the LoRA adapters a server has loaded, by name (vLLM's
// convention: a request selects one with `model: "NAME"`). load() reads and
// checks the file through the engine's loader (model/lora_load.h) and gives
// the adapter an id never reused, which salts its prefix-cache keys; unload()
// forgets the name at once (new requests no longer find it) while requests
// already holding the adapter keep it (EngineRequest::adapter) until they
// end, and the device frees it when its slot is reused.
// Invariants: names are unique; ids start at 1 (0 is the base model) and
// grow; at most kMaxLoadedAdapters are loaded at once.
// Threading: every method from any thread (a mutex; load() reads the file
// outside it). Tested by tests/engine/adapter_registry_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/lora_adapter.h"
#include "core/mutex.h"
#include "core/status.h"

namespace met {

inline constexpr size_t kMaxLoadedAdapters = 1024;

class AdapterRegistry {
 public:
  // Reads the adapter at `path` for the served model, named `name`.
  using Loader = std::function<Result<std::shared_ptr<const LoraAdapter>>(const std::string& path,
                                                                         const std::string& name)>;
  explicit AdapterRegistry(Loader loader) : loader_(std::move(loader)) {}

  struct Entry {
    std::string name;
    std::string path;
    uint64_t id = 0;
    std::shared_ptr<const LoraAdapter> adapter;
  };

  // kInvalidArgument: an empty or taken name, too many adapters, or the
  // loader's error (a bad file, naming the fault).
  Status load(const std::string& name, const std::string& path);
  // kNotFound when no adapter has that name.
  Status unload(std::string_view name);
  std::optional<Entry> find(std::string_view name) const;
  std::vector<Entry> list() const;  // in load order

 private:
  Loader loader_;
  mutable Mutex mu_;
  std::vector<Entry> entries_ GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
};

// Parses "NAME=PATH" (--lora).
Result<std::pair<std::string, std::string>> parse_lora_flag(std::string_view flag);

}  // namespace met
