// Public row conversion: validates sizes, then runs the selected kernel.
// Threading: pure functions. Tested by tests/tensor/quantize_test.cc.
#include "tensor/quantize.h"

#include <string>

#include "tensor/row_kernels.h"

namespace met {
namespace {

// A printable name even for an id outside the enum.
std::string type_label(GgmlType type) {
  const auto traits = ggml_type_traits(static_cast<uint32_t>(type));
  if (traits.has_value()) return std::string(traits->name);
  return fmt::format("type id {}", static_cast<uint32_t>(type));
}

// Checks that `num_elements` fills whole blocks and `num_bytes` is their size.
Status check_row_sizes(const char* op, GgmlType type, size_t num_elements, size_t num_bytes,
                       const char* bytes_role) {
  const GgmlTypeTraits& traits = ggml_type_traits(type);
  const std::optional<uint64_t> row_bytes = ggml_row_bytes(type, num_elements);
  if (!row_bytes.has_value()) {
    return invalid_argument("{}: {} row of {} elements is not a multiple of the block size {}", op,
                            traits.name, num_elements, traits.block_size);
  }
  if (*row_bytes != num_bytes) {
    return invalid_argument("{}: {} row of {} elements needs {} bytes of {}, got {}", op,
                            traits.name, num_elements, *row_bytes, bytes_role, num_bytes);
  }
  return ok_status();
}

}  // namespace

bool can_dequantize(GgmlType type) { return selected_row_kernels(type).dequantize != nullptr; }

bool can_quantize(GgmlType type) { return selected_row_kernels(type).quantize != nullptr; }

Status dequantize_row(GgmlType type, std::span<const uint8_t> src, std::span<float> dst) {
  const RowKernels& kernels = selected_row_kernels(type);
  if (kernels.dequantize == nullptr) {
    return unimplemented("dequantize_row: met cannot decode {} tensors", type_label(type));
  }
  MET_RETURN_IF_ERROR(check_row_sizes("dequantize_row", type, dst.size(), src.size(), "source"));
  kernels.dequantize(src.data(), dst.data(), static_cast<int64_t>(dst.size()));
  return ok_status();
}

Status quantize_row(GgmlType type, std::span<const float> src, std::span<uint8_t> dst) {
  const RowKernels& kernels = selected_row_kernels(type);
  if (kernels.quantize == nullptr) {
    return unimplemented(
        "quantize_row: met cannot quantize to {} (it can to f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, "
        "q5_k, q6_k, q8_k, mxfp4, iq4_nl, iq4_xs)",
        type_label(type));
  }
  MET_RETURN_IF_ERROR(check_row_sizes("quantize_row", type, src.size(), dst.size(), "destination"));
  kernels.quantize(src.data(), dst.data(), static_cast<int64_t>(src.size()));
  return ok_status();
}

}  // namespace met
