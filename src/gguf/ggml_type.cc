// GgmlType traits: the table of on-disk tensor types and their block geometry
// (ggml's type_traits; sizes match ggml-common.h's static_asserts).
// Invariants: kTraits is indexed by nothing; lookups search it, so a gap in
// the on-disk ids (removed types) can never alias a live type.
// Threading: constant data. Tested by tests/gguf/ggml_type_test.cc.
#include "gguf/ggml_type.h"

#include <array>

#include "core/check.h"

namespace met {
namespace {

constexpr uint32_t kQK = 32;    // elements per block of the *_0/*_1 families
constexpr uint32_t kQKK = 256;  // elements per super-block of the k-quants

constexpr std::array<GgmlTypeTraits, 32> kTraits = {{
    {GgmlType::kF32, "f32", 1, 4},
    {GgmlType::kF16, "f16", 1, 2},
    {GgmlType::kQ4_0, "q4_0", kQK, 2 + 16},
    {GgmlType::kQ4_1, "q4_1", kQK, 2 + 2 + 16},
    {GgmlType::kQ5_0, "q5_0", kQK, 2 + 4 + 16},
    {GgmlType::kQ5_1, "q5_1", kQK, 2 + 2 + 4 + 16},
    {GgmlType::kQ8_0, "q8_0", kQK, 2 + 32},
    {GgmlType::kQ8_1, "q8_1", kQK, 2 + 2 + 32},  // fp16 d and s (gguf-py still says 40)
    {GgmlType::kQ2_K, "q2_k", kQKK, 2 + 2 + kQKK / 16 + kQKK / 4},
    {GgmlType::kQ3_K, "q3_k", kQKK, 2 + kQKK / 4 + kQKK / 8 + 12},
    {GgmlType::kQ4_K, "q4_k", kQKK, 2 + 2 + kQKK / 2 + 12},
    {GgmlType::kQ5_K, "q5_k", kQKK, 2 + 2 + kQKK / 2 + kQKK / 8 + 12},
    {GgmlType::kQ6_K, "q6_k", kQKK, 2 + kQKK / 2 + kQKK / 4 + kQKK / 16},
    {GgmlType::kQ8_K, "q8_k", kQKK, 4 + kQKK + kQKK / 8},
    {GgmlType::kIQ2_XXS, "iq2_xxs", kQKK, 2 + kQKK / 4},
    {GgmlType::kIQ2_XS, "iq2_xs", kQKK, 2 + kQKK / 4 + kQKK / 32},
    {GgmlType::kIQ3_XXS, "iq3_xxs", kQKK, 2 + kQKK / 4 + kQKK / 8},
    {GgmlType::kIQ1_S, "iq1_s", kQKK, 2 + kQKK / 8 + kQKK / 16},
    {GgmlType::kIQ4_NL, "iq4_nl", kQK, 2 + 16},
    {GgmlType::kIQ3_S, "iq3_s", kQKK, 2 + kQKK / 4 + kQKK / 8 + kQKK / 32 + 4},
    {GgmlType::kIQ2_S, "iq2_s", kQKK, 2 + kQKK / 4 + kQKK / 16},
    {GgmlType::kIQ4_XS, "iq4_xs", kQKK, 2 + 2 + kQKK / 2 + kQKK / 64},
    {GgmlType::kI8, "i8", 1, 1},
    {GgmlType::kI16, "i16", 1, 2},
    {GgmlType::kI32, "i32", 1, 4},
    {GgmlType::kI64, "i64", 1, 8},
    {GgmlType::kF64, "f64", 1, 8},
    {GgmlType::kIQ1_M, "iq1_m", kQKK, kQKK / 8 + kQKK / 16 + kQKK / 32},
    {GgmlType::kBF16, "bf16", 1, 2},
    {GgmlType::kTQ1_0, "tq1_0", kQKK, 2 + 4 * 13},
    {GgmlType::kTQ2_0, "tq2_0", kQKK, 2 + 64},
    {GgmlType::kMXFP4, "mxfp4", kQK, 1 + 16},
}};

char to_lower_ascii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (to_lower_ascii(a[i]) != to_lower_ascii(b[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t raw_type) {
  for (const GgmlTypeTraits& traits : kTraits) {
    if (static_cast<uint32_t>(traits.type) == raw_type) return traits;
  }
  return std::nullopt;
}

const GgmlTypeTraits& ggml_type_traits(GgmlType type) {
  for (const GgmlTypeTraits& traits : kTraits) {
    if (traits.type == type) return traits;
  }
  MET_CHECK(false, "GgmlType {} has no traits", static_cast<uint32_t>(type));
  return kTraits[0];  // unreachable: MET_CHECK aborts
}

std::string_view ggml_type_name(GgmlType type) { return ggml_type_traits(type).name; }

std::optional<GgmlType> parse_ggml_type(std::string_view name) {
  for (const GgmlTypeTraits& traits : kTraits) {
    if (equals_ignoring_case(traits.name, name)) return traits.type;
  }
  return std::nullopt;
}

std::optional<uint64_t> ggml_row_bytes(GgmlType type, uint64_t num_elements) {
  const GgmlTypeTraits& traits = ggml_type_traits(type);
  if (num_elements % traits.block_size != 0) return std::nullopt;
  uint64_t num_bytes = 0;
  if (__builtin_mul_overflow(num_elements / traits.block_size, uint64_t{traits.type_size},
                             &num_bytes)) {
    return std::nullopt;
  }
  return num_bytes;
}

}  // namespace met
