// CpuFeatures and Isa: what the CPU can run, read once from cpuid/xgetbv, and
// the kernel tier met selects from it. Code for each tier lives in its own
// translation units compiled with that tier's flags (cmake/MetTargets.cmake);
// callers pick a function once per process with select_isa().
// Tiers, in order: kAvx2 (x86-64-v3, the baseline the binary needs),
// kAvxVnni (kAvx2 + the VEX-encoded VNNI of Intel's client cores since Alder
// Lake, which have no AVX-512), kAvx512 (x86-64-v4 + VNNI + BF16), kAmx
// (kAvx512 + AMX tile/int8/bf16, with the kernel's permission to use tile
// state). The order is not a chain of supersets: an AVX-512 CPU may lack
// AVX-VNNI (Zen 4, Ice Lake), so code that runs a tier's kernels asks
// isa_supported(), never compares against best_isa().
// Threading: detect_cpu_features() is pure; any thread.
// Tested by tests/core/cpu_features_test.cc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace met {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool bmi2 = false;
  bool avxvnni = false;  // VEX-encoded vpdpbusd on ymm (cpuid 7.1 eax bit 4)
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512cd = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
  bool avx512fp16 = false;
  bool amx_tile = false;
  bool amx_int8 = false;
  bool amx_bf16 = false;
  bool os_avx512 = false;  // XCR0 enables opmask/ZMM state
  bool os_amx = false;     // XCR0 enables tile state and the kernel granted it
};

enum class Isa { kScalar, kAvx2, kAvxVnni, kAvx512, kAmx };

// Every tier, lowest first.
inline constexpr Isa kAllIsas[] = {Isa::kScalar, Isa::kAvx2, Isa::kAvxVnni, Isa::kAvx512, Isa::kAmx};

// Reads cpuid and xgetbv; asks the kernel for AMX tile permission when the CPU
// has AMX. Cached after the first call.
const CpuFeatures& detect_cpu_features();

// Whether `f` runs tier `isa`'s kernels (kScalar: always).
bool isa_supported(const CpuFeatures& f, Isa isa);

// Highest tier `f` supports at or below `cap` when given. kScalar only when
// the CPU lacks AVX2 (met's baseline), which apps/ reports as an error.
Isa best_isa(const CpuFeatures& f, std::optional<Isa> cap = std::nullopt);

// The tier this process uses: best_isa(detect_cpu_features(), cap set by
// set_isa_cap before the first call). Fixed after the first call.
Isa selected_isa();
// Caps the tier (the `--isa` flag or MET_ISA, read in apps/). Must be called
// before the first selected_isa(); returns false if it is too late.
bool set_isa_cap(Isa cap);

std::string_view isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);
// "avx2 fma f16c avx512f ... amx-int8" for --version and `met info`.
std::string cpu_feature_summary(const CpuFeatures& f);

}  // namespace met
