// vm_flags_of, advised_for_huge_pages, resident_share and drop_cached_pages
// (memory_map.h).
#include "testing/memory_map.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

std::optional<double> resident_share(const void* p, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page * page;
  if (end <= begin) return std::nullopt;
  std::vector<unsigned char> in((end - begin) / page);
  if (mincore(reinterpret_cast<void*>(begin), end - begin, in.data()) != 0) return std::nullopt;
  size_t resident = 0;
  for (unsigned char v : in) resident += v & 1;
  return static_cast<double>(resident) / static_cast<double>(in.size());
}

std::optional<double> drop_cached_pages(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<double> share;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    (void)fdatasync(fd);
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    const auto size = static_cast<size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      share = resident_share(map, size);
      munmap(map, size);
    }
  }
  close(fd);
  return share;
}

}  // namespace met::testing
