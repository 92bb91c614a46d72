// TempDir: a fresh directory under the system temp dir, removed with its
// contents on destruction. Threading: one owner.
#pragma once

#include <string>

namespace met::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace met::testing
