// The RoPE angle table (see rope_table.h).
#include "backend/cuda/rope_table.h"

#include "backend/cpu/kernels/reference/kernels_ref.h"

namespace met::cuda {

std::vector<float> rope_table(const cpu::RopeParams& params, int32_t positions) {
  std::vector<float> table(static_cast<size_t>(positions) * static_cast<size_t>(params.rope_dims));
  for (int32_t p = 0; p < positions; ++p) {
    cpu::ref::rope_cache(p, params, table.data() + static_cast<size_t>(p) * static_cast<size_t>(params.rope_dims));
  }
  return table;
}

}  // namespace met::cuda
