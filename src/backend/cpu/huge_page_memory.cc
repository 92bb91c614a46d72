// HugePageMemory and WeightArena. Tested by tests/backend/huge_page_memory_test.cc.
#include "backend/cpu/huge_page_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "core/check.h"

namespace met::cpu {

std::string_view selected_thp_mode(std::string_view line) {
  const size_t open = line.find('[');
  const size_t close = line.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return {};
  return line.substr(open + 1, close - open - 1);
}

std::string transparent_huge_page_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!f || !std::getline(f, line)) return {};
  return std::string(selected_thp_mode(line));
}

Result<HugePageMemory> HugePageMemory::map(size_t bytes) {
  bytes = bytes == 0 ? 1 : bytes;
  const bool huge = bytes >= kHugePageBytes;
  // Over-mapped by one huge page so the memory can start 2 MiB aligned.
  const size_t mapped = huge ? bytes + kHugePageBytes : bytes;
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    return io_error("mapping {:.1f} MiB failed: {}", static_cast<double>(bytes) / (1 << 20), std::strerror(errno));
  }
  HugePageMemory m;
  m.base_ = static_cast<uint8_t*>(base);
  m.mapped_bytes_ = mapped;
  m.data_ = m.base_;
  m.size_ = bytes;
  if (huge) {
    const auto addr = reinterpret_cast<uintptr_t>(base);
    m.data_ += (addr + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes - addr;
    (void)madvise(m.data_, bytes, MADV_HUGEPAGE);  // a hint: may be refused
  }
  return m;
}

HugePageMemory::HugePageMemory(HugePageMemory&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

HugePageMemory& HugePageMemory::operator=(HugePageMemory&& other) noexcept {
  if (this != &other) {
    unmap();
    base_ = std::exchange(other.base_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

HugePageMemory::~HugePageMemory() { unmap(); }

void HugePageMemory::prefault() {
  if (data_ == nullptr) return;
#ifdef MADV_POPULATE_WRITE
  // One call backs the range writable, contents unchanged (Linux 5.14 on).
  const auto page = reinterpret_cast<uintptr_t>(data_) / kPageBytes * kPageBytes;
  const size_t bytes = reinterpret_cast<uintptr_t>(data_) + size_ - page;
  if (madvise(reinterpret_cast<void*>(page), bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
  // A read would map the shared zero page; only a write backs a page.
  volatile uint8_t* p = data_;
  for (size_t i = 0; i < size_; i += kPageBytes) p[i] = 0;
}

void HugePageMemory::unmap() {
  if (base_ != nullptr) munmap(base_, mapped_bytes_);
  base_ = data_ = nullptr;
  mapped_bytes_ = size_ = 0;
}

uint8_t* WeightArena::allocate(size_t bytes) {
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  bytes = bytes == 0 ? kAlign : bytes;
  auto map = [&](size_t size) {
    Result<HugePageMemory> m = HugePageMemory::map(size);
    MET_CHECK(m.ok(), "weights: {}", m.status().message());
    chunks_.push_back(std::move(m).value());
    return chunks_.back().data();
  };
  if (bytes > chunk_bytes_ / 4) return map(bytes);
  if (shared_ == SIZE_MAX || used_ + bytes > chunks_[shared_].size()) {
    map(chunk_bytes_);
    shared_ = chunks_.size() - 1;
    used_ = 0;
  }
  uint8_t* p = chunks_[shared_].data() + used_;
  used_ += bytes;
  return p;
}

size_t WeightArena::bytes_mapped() const {
  size_t total = 0;
  for (const HugePageMemory& c : chunks_) total += c.size();
  return total;
}

}  // namespace met::cpu
