// vm_flags_of and advised_for_huge_pages (memory_map.h).
#include "testing/memory_map.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace met::testing {

std::optional<std::string> vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) return std::nullopt;
  const auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintmax_t begin = 0, end = 0;
    // A mapping's header: "begin-end perms offset dev inode [path]".
    if (std::sscanf(line.c_str(), "%jx-%jx ", &begin, &end) == 2 && line.find(':') > line.find(' ')) {
      inside = begin <= addr && addr < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8);
  }
  return std::nullopt;
}

std::optional<bool> advised_for_huge_pages(const void* p) {
  const std::optional<std::string> flags = vm_flags_of(p);
  if (!flags) return std::nullopt;
  std::istringstream words(*flags);
  for (std::string w; words >> w;) {
    if (w == "hg") return true;
  }
  return false;
}

}  // namespace met::testing
