// Compute peaks: how many multiply-accumulates a second the cores reach
// with the instruction a weight type's matmul kernels are built on, on the
// selected tier (AVX-512: vpdpbusd for the integer types, vdpbf16ps for
// BF16, vfmadd on 16 floats for F16 and F32; AVX2: vpmaddubsw's 32
// byte products, vfmadd on 8 floats). `met bench` divides it by the MACs a
// token's matmuls need for its prefill ceiling, as it divides the memory
// read rate (memory_bandwidth.h) by the bytes a decode step reads. The
// loop keeps 12 independent accumulators in registers, so it measures the
// execution units' throughput, not a latency; the kernels also load,
// decode and scale, so the ceiling is one they approach, never pass (but on
// the amx tier, whose tile unit runs batches of 16 rows or more past
// vpdpbusd's rate: there the bound is AVX-512's, and says so by name).
// Threading: a measurement from one thread at a time (it spawns and joins
// its own threads). Tested by tests/backend/compute_peak_test.cc (that it
// measures something, not how much).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/cpu_features.h"
#include "gguf/ggml_type.h"

namespace met::cpu {

enum class MacKind { kInt8Dot, kBf16Dot, kFp32Fma };

// The arithmetic `weight_type`'s matmul kernels run on `isa`.
MacKind mac_kind_of(GgmlType weight_type, Isa isa);
// "vpdpbusd", "vpmaddubsw", "vdpbf16ps", "vfmadd" (as `isa` runs `kind`).
std::string_view mac_instruction(MacKind kind, Isa isa);

// MACs a second `num_threads` threads reach with `kind` on `isa`, best of
// `repeats` runs of a few milliseconds; 0 on the scalar tier (no bound).
double measure_mac_rate(MacKind kind, Isa isa, int num_threads, int repeats = 3);

// The per-tier loops behind it: MACs done by `iterations` rounds of 12
// independent instructions of `kind`.
namespace avx512 {
int64_t mac_loop(MacKind kind, int64_t iterations);
}
namespace avxvnni {
int64_t mac_loop(MacKind kind, int64_t iterations);  // kInt8Dot only: the others are AVX2's
}  // namespace avxvnni
namespace avx2 {
int64_t mac_loop(MacKind kind, int64_t iterations);
}

}  // namespace met::cpu
