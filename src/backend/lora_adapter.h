// LoraAdapter: a LoRA adapter's weights as a device runs them: for each
// adapted matrix W (rows × cols) of the model, the low-rank pair whose
// product updates the matrix's output: y = W·x + scale · B·(A·x), A being
// rank × cols and B rows × rank (llama.cpp's lora_a and lora_b). A is kept
// row-major and B transposed (rank × rows), the layouts the CPU kernels
// stream (backend/cpu/kernels/lora.h). Matrices are named by layer and
// LoraTarget; model/lora_load.h reads them from GGUF and checks them against
// the model.
// Invariants: a pair with rank 0 adapts nothing; otherwise a has rank × cols
// floats and bt rank × rows, for the matrix's own rows and cols.
// Threading: immutable once built; shared by the devices' slots and the
// requests using it (std::shared_ptr<const LoraAdapter>).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace met {

// The weight matrices an adapter may change.
enum class LoraTarget : uint8_t { kQ, kK, kV, kO, kGate, kUp, kDown, kOutput, kNone };
inline constexpr int kNumLoraTargets = 8;  // kQ … kOutput

// Its tensor's name in a layer (attn_q, …, ffn_down) or alone (output).
const char* lora_target_name(LoraTarget t);

struct LoraPair {
  int32_t rank = 0;          // 0: not adapted
  float scale = 0.0f;        // alpha / rank (1 without alpha), times the adapter's scale
  int64_t rows = 0;          // the matrix's outputs
  int64_t cols = 0;          // its inputs
  std::vector<float> a;      // rank × cols, row-major
  std::vector<float> bt;     // rank × rows: B transposed
};

struct LoraAdapter {
  std::string name;
  int32_t max_rank = 0;  // over its pairs
  // Per trunk layer, per target kQ … kDown (kOutput's entry unused).
  std::vector<std::array<LoraPair, kNumLoraTargets>> layers;
  LoraPair output;  // the head (lm_head)

  // The pair of `target` in `layer` (ignored for kOutput), or null when the
  // adapter leaves that matrix alone.
  const LoraPair* find(int32_t layer, LoraTarget target) const {
    const LoraPair* p = nullptr;
    if (target == LoraTarget::kOutput) {
      p = &output;
    } else if (target != LoraTarget::kNone && layer >= 0 && layer < static_cast<int32_t>(layers.size())) {
      p = &layers[static_cast<size_t>(layer)][static_cast<size_t>(target)];
    }
    return p != nullptr && p->rank > 0 ? p : nullptr;
  }
  // Bytes its pairs hold.
  int64_t num_bytes() const;
};

}  // namespace met
