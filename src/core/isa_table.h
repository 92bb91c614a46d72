// overlay_isa_tiers: builds a per-type kernel table for the ISA tier this
// process runs, by laying each tier's kernels over the ones below it (scalar
// reference first, then AVX2, AVX-VNNI, AVX-512, AMX, up to `selected`,
// skipping a tier `cpu` does not run, as an AVX-512 CPU may lack AVX-VNNI):
// a tier's non-null kernel replaces the lower one, so a type a tier does not
// speed up keeps the best lower version. Used by src/tensor/row_kernels.cc and
// src/backend/cpu/kernels/matmul.cc.
// Threading: pure; callers keep the result in a function-local static.
// Tested through those tables' tests (tests/tensor/isa_kernels_test.cc,
// tests/backend/matmul_test.cc).
#pragma once

#include <array>
#include <cstddef>

#include "core/cpu_features.h"

namespace met {

// EntriesOf(Isa) returns a range of entries with `.type` (an enum whose value
// is below kSlots) and `.kernels`; Overlay(Kernels& slot, const Kernels& tier)
// copies the tier's non-null kernels into the slot.
template <typename Kernels, size_t kSlots, typename EntriesOf, typename Overlay>
std::array<Kernels, kSlots> overlay_isa_tiers(const CpuFeatures& cpu, Isa selected, EntriesOf entries_of,
                                              Overlay overlay) {
  std::array<Kernels, kSlots> table{};
  for (Isa tier : kAllIsas) {
    if (tier > selected) break;
    if (!isa_supported(cpu, tier)) continue;
    for (const auto& entry : entries_of(tier)) overlay(table[static_cast<size_t>(entry.type)], entry.kernels);
  }
  return table;
}

}  // namespace met
