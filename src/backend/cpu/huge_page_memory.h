// Memory the CPU streams at memory speed: packed weights, the KV pool, the
// recurrent state pool, the bandwidth probe. Anonymous mappings from 2 MiB
// up start 2 MiB aligned and are advised for transparent huge pages
// (MADV_HUGEPAGE), so the kernel backs them with 2 MiB pages where it can.
// Why: a batch-1 decode step streams every weight once, and with 4 KiB pages
// that is a TLB miss every 4 KiB; on the virtual machines met is measured
// on (two-level page walks) a 2-thread read of 1 GiB ran at 27-42 GB/s in
// 4 KiB pages and 53-66 GB/s in huge pages, minutes apart on one host.
// The advice is a hint: with transparent huge pages off ("never") or memory
// too fragmented the pages are 4 KiB and everything works the same.
//   HugePageMemory  one zeroed mapping, unmapped on destruction.
//   WeightArena     a bump allocator over HugePageMemory chunks for many
//                   matrices of a model (MoE experts are ~1 MiB each: one
//                   mapping apiece could never be huge), freed together.
// Threading: not thread-safe; a model's arena is filled while it loads.
// Tested by tests/backend/huge_page_memory_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace met::cpu {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;
// The smallest page the kernel backs memory in (x86-64).
inline constexpr size_t kPageBytes = 4096;

// The kernel's transparent huge page mode ("always", "madvise" or "never"),
// read from /sys/kernel/mm/transparent_hugepage/enabled; empty when it
// cannot be read. With "never" the advice does nothing.
std::string transparent_huge_page_mode();
// The selected word of that file's line ("always [madvise] never" ->
// "madvise"); empty when no word is bracketed.
std::string_view selected_thp_mode(std::string_view line);

class HugePageMemory {
 public:
  // `bytes` (at least 1) of zeroed memory; from kHugePageBytes up 2 MiB
  // aligned and advised for huge pages. An io_error naming the size when
  // the mapping fails.
  static Result<HugePageMemory> map(size_t bytes);

  HugePageMemory() = default;
  HugePageMemory(HugePageMemory&& other) noexcept;
  HugePageMemory& operator=(HugePageMemory&& other) noexcept;
  HugePageMemory(const HugePageMemory&) = delete;
  HugePageMemory& operator=(const HugePageMemory&) = delete;
  ~HugePageMemory();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Backs every page now (MADV_POPULATE_WRITE, else a zero written into
  // each page), contents unchanged, rather than in whatever touches each
  // page first (a VM's host may back memory it took back at about 150 MB
  // a second).
  void prefault();

 private:
  void unmap();
  uint8_t* base_ = nullptr;  // what mmap returned
  size_t mapped_bytes_ = 0;  // what to munmap
  uint8_t* data_ = nullptr;  // base_ rounded up to 2 MiB when advised
  size_t size_ = 0;
};

class WeightArena {
 public:
  static constexpr size_t kAlign = 64;
  // Chunks of `chunk_bytes` (64 MiB by default; a request larger than a
  // quarter of that gets a chunk of its own, so a chunk's unused tail stays
  // small).
  WeightArena() = default;
  explicit WeightArena(size_t chunk_bytes) : chunk_bytes_(chunk_bytes) {}

  // `bytes` of zeroed memory, kAlign aligned, valid as long as the arena.
  // MET_CHECK-fails when the machine cannot map it (as a failed allocation
  // of the weights would).
  uint8_t* allocate(size_t bytes);
  // Bytes mapped for the pieces handed out.
  size_t bytes_mapped() const;

 private:
  size_t chunk_bytes_ = size_t{64} << 20;
  std::vector<HugePageMemory> chunks_;
  size_t used_ = 0;  // of the shared chunk, chunks_[shared_]
  size_t shared_ = SIZE_MAX;
};

}  // namespace met::cpu
