// The walk over 16-row packed groups for the AVX-512 kernels that walk
// groups in pairs: every group overlapping the task's [n_begin, n_end),
// front to back, two at a time while the caller pairs them, with the store
// masks of their outputs inside the range. Walk and group_mask serve
// matmul_fx16_avx512.cc (F16x16, Bf16x16) and matmul_kx16_avx512.cc
// (Q4_Kx16, Q5_Kx16); walk_groups serves only the latter (the former
// writes the loops out: its run_groups says why).
// Include only from translation units built with the AVX-512 flags; always
// inlined, so no copy built for one ISA serves another.
// Threading: pure functions. Tested by tests/backend/packed_weights_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/kernels/matmul_kernels.h"
#include "core/avx512_intrinsics.h"

namespace met::cpu::avx512 {

inline constexpr int64_t kWalkGroupRows = 16;  // rows of every packed layout's group

// Where a tile walks: G consecutive groups (G * 16 outputs, group g's at
// n0 + 16 g, where masks[g] is set) from `group` on.
template <int G>
struct Walk {
  const uint8_t* group;
  int64_t n0;
  __mmask16 masks[G];
};

// Outputs n0 .. n0 + 15 of the task's range [n_begin, n_end), as a mask.
[[gnu::always_inline]] inline __mmask16 group_mask(const MatmulTask& t, int64_t n0) {
  // (No std::min/max: an inline template instantiated here would be built
  // for AVX-512 and could be the copy the linker keeps for baseline code.)
  const int64_t lo = t.n_begin > n0 ? t.n_begin - n0 : 0;
  const int64_t hi = t.n_end < n0 + kWalkGroupRows ? t.n_end - n0 : kWalkGroupRows;
  return static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
}

// visit(Walk<2>) for two groups at a time while `pair` (a layout that can,
// kPairs) and two are left, then visit(Walk<1>) for each group left.
template <bool kPairs, class Visit>
[[gnu::always_inline]] inline void walk_groups(const MatmulTask& t, bool pair, Visit&& visit) {
  const size_t group_bytes = t.weight_row_bytes;
  int64_t g = t.n_begin / kWalkGroupRows;
  if constexpr (kPairs) {
    for (; pair && (g + 1) * kWalkGroupRows < t.n_end; g += 2) {
      const int64_t n0 = g * kWalkGroupRows;
      visit(Walk<2>{t.weights + static_cast<size_t>(g) * group_bytes, n0,
                    {group_mask(t, n0), group_mask(t, n0 + kWalkGroupRows)}});
    }
  }
  for (; g * kWalkGroupRows < t.n_end; ++g) {
    const int64_t n0 = g * kWalkGroupRows;
    visit(Walk<1>{t.weights + static_cast<size_t>(g) * group_bytes, n0, {group_mask(t, n0)}});
  }
}

}  // namespace met::cpu::avx512
