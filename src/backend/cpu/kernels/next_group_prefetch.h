// The prefetch a packed matmul kernel's walks over one 16-row group share.
// A kernel walks each group once per tile of activation rows (and per half
// group, on AVX2); with more than one walk the first reads the group from
// DRAM and the rest from cache, so memory would idle while they compute.
// Instead each walk takes a share of the next group of the task: step k of
// walk w (covering bytes [offset, offset + bytes) of the group) prefetches the
// same bytes of the next group into L2 when k % walks == w, so the next group
// streams in while this one is computed. Measured (met_matmul_bench,
// decode/q8_0x16/avx512/1024x4096/m:16, weights from DRAM, 2 threads): 22.3
// -> 15.9 ms per 256 MiB of copies.
// Always inlined: per-ISA translation units include it, and an out-of-line
// copy built for one ISA must never serve another.
// Threading: pure functions. Results are unchanged by a prefetch; the
// kernels' tests (tests/backend/packed_weights_test.cc) cover every walk.
#pragma once

#include <xmmintrin.h>

#include <cstddef>
#include <cstdint>

namespace met::cpu {

struct NextGroupShare {
  const uint8_t* next = nullptr;  // the next group, or null: no prefetch
  int64_t walks = 1;
  int64_t walk = 0;
};

// Walk `walk` of `walks` over the group at `group` (group_bytes long), whose
// task has a next group when `has_next`. One walk prefetches nothing: the
// hardware prefetchers (or the kernel's own prefetch) follow its stream.
[[gnu::always_inline]] inline NextGroupShare next_group_share(int64_t walks, int64_t walk, const uint8_t* group,
                                                              size_t group_bytes, bool has_next) {
  if (walks < 2 || !has_next) return {};
  return {group + group_bytes, walks, walk};
}

// prefetch_share for a step whose `turn` (step % share.walks) the caller
// keeps: a loop that steps a counter instead of dividing each step.
[[gnu::always_inline]] inline void prefetch_share_turn(const NextGroupShare& share, int64_t turn, size_t offset,
                                                       size_t bytes) {
  if (share.next == nullptr || turn != share.walk) return;
  for (size_t line = 0; line < bytes; line += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(share.next + offset + line), _MM_HINT_T1);
  }
}

[[gnu::always_inline]] inline void prefetch_share(const NextGroupShare& share, int64_t step, size_t offset,
                                                  size_t bytes) {
  if (share.next != nullptr) prefetch_share_turn(share, step % share.walks, offset, bytes);
}

}  // namespace met::cpu
