// shared/ lookup for tests.
#include "testing/shared_data.h"

#include <cstdlib>
#include <filesystem>

namespace met::testing {

std::optional<std::string> shared_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("MET_SHARED_DIR"); env != nullptr && *env != '\0') {
    if (fs::is_directory(env)) return std::string(env);
    return std::nullopt;
  }
  const fs::path candidate = fs::path(MET_SOURCE_DIR) / ".." / "shared";
  if (fs::is_directory(candidate)) return fs::canonical(candidate).string();
  return std::nullopt;
}

std::optional<std::string> shared_path(const std::string& relative) {
  auto dir = shared_dir();
  if (!dir) return std::nullopt;
  std::string path = *dir + "/" + relative;
  if (!std::filesystem::exists(path)) return std::nullopt;
  return path;
}

}  // namespace met::testing
