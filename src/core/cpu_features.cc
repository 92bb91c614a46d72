// cpuid/xgetbv probing and the process-wide ISA choice.
// Threading: the choice is made once under std::call_once.
// Tested by tests/core/cpu_features_test.cc.
#include "core/cpu_features.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/mutex.h"

namespace met {
namespace {

constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

bool bit(uint32_t reg, int n) { return (reg >> n) & 1u; }

CpuFeatures probe() {
  CpuFeatures f;
  uint32_t a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = bit(c, 27);
  f.fma = bit(c, 12);
  f.f16c = bit(c, 29);
  const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  f.os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
  const bool os_tile = (xcr0 & (3ull << 17)) == (3ull << 17);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  f.avx2 = os_avx && bit(b, 5);
  f.bmi2 = bit(b, 8);
  f.fma = f.fma && os_avx;
  f.f16c = f.f16c && os_avx;
  if (f.os_avx512) {
    f.avx512f = bit(b, 16);
    f.avx512dq = bit(b, 17);
    f.avx512cd = bit(b, 28);
    f.avx512bw = bit(b, 30);
    f.avx512vl = bit(b, 31);
    f.avx512vnni = bit(c, 11);
    f.avx512fp16 = bit(d, 23);
  }
  f.amx_bf16 = bit(d, 22);
  f.amx_tile = bit(d, 24);
  f.amx_int8 = bit(d, 25);
  uint32_t a1, b1, c1, d1;
  if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) {
    f.avxvnni = os_avx && bit(a1, 4);
    f.avx512bf16 = f.os_avx512 && bit(a1, 5);
  }
  if (f.amx_tile && os_tile) {
    f.os_amx = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }
  return f;
}

Mutex g_isa_mu;
std::optional<Isa> g_isa_cap GUARDED_BY(g_isa_mu);
std::atomic<bool> g_isa_fixed{false};

}  // namespace

const CpuFeatures& detect_cpu_features() {
  static const CpuFeatures features = probe();
  return features;
}

bool isa_supported(const CpuFeatures& f, Isa isa) {
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  const bool v4 = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512cd;
  const bool avx512 = avx2 && v4 && f.avx512vnni && f.avx512bf16;
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kAvx2: return avx2;
    case Isa::kAvxVnni: return avx2 && f.avxvnni;
    case Isa::kAvx512: return avx512;
    case Isa::kAmx: return avx512 && f.amx_tile && f.amx_int8 && f.amx_bf16 && f.os_amx;
  }
  return false;
}

Isa best_isa(const CpuFeatures& f, std::optional<Isa> cap) {
  Isa best = Isa::kScalar;
  for (Isa isa : kAllIsas) {
    if (cap && static_cast<int>(isa) > static_cast<int>(*cap)) break;
    if (isa_supported(f, isa)) best = isa;
  }
  return best;
}

Isa selected_isa() {
  static const Isa isa = [] {
    MutexLock lock(g_isa_mu);
    g_isa_fixed = true;
    return best_isa(detect_cpu_features(), g_isa_cap);
  }();
  return isa;
}

bool set_isa_cap(Isa cap) {
  MutexLock lock(g_isa_mu);
  if (g_isa_fixed) return false;
  g_isa_cap = cap;
  return true;
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvxVnni: return "avxvnni";
    case Isa::kAvx512: return "avx512";
    case Isa::kAmx: return "amx";
  }
  return "unknown";
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (Isa isa : kAllIsas) {
    if (isa_name(isa) == name) return isa;
  }
  return std::nullopt;
}

std::string cpu_feature_summary(const CpuFeatures& f) {
  const std::pair<bool, const char*> flags[] = {
      {f.avx2, "avx2"},         {f.fma, "fma"},           {f.f16c, "f16c"},
      {f.bmi2, "bmi2"},         {f.avxvnni, "avx-vnni"},  {f.avx512f, "avx512f"},   {f.avx512bw, "avx512bw"},
      {f.avx512vl, "avx512vl"}, {f.avx512dq, "avx512dq"}, {f.avx512vnni, "avx512vnni"},
      {f.avx512bf16, "avx512bf16"}, {f.avx512fp16, "avx512fp16"},
      {f.amx_tile && f.os_amx, "amx-tile"}, {f.amx_int8 && f.os_amx, "amx-int8"},
      {f.amx_bf16 && f.os_amx, "amx-bf16"}};
  std::string out;
  for (const auto& [on, name] : flags) {
    if (!on) continue;
    if (!out.empty()) out += ' ';
    out += name;
  }
  return out.empty() ? "none" : out;
}

}  // namespace met
