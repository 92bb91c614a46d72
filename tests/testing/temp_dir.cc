// TempDir over mkdtemp.
#include "testing/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/check.h"

namespace met::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "met-test-XXXXXX").string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  MET_CHECK(mkdtemp(buf.data()) != nullptr, "mkdtemp failed for {}", pattern);
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace met::testing
