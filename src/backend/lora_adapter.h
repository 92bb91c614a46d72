// LoraAdapter: a LoRA adapter's weights as a device runs them: for each
// adapted matrix W (rows × cols) of the model, the low-rank pair whose
// product updates the matrix's output: y = W·x + scale · B·(A·x), A being
// rank × cols and B rows × rank (llama.cpp's lora_a and lora_b). A is kept
// row-major and B in panels of kLoraPanel outputs (lora_panel_index), the
// layouts the CPU kernels stream (backend/cpu/kernels/lora.h). Matrices are named by layer and
// LoraTarget; model/lora_load.h reads them from GGUF and checks them against
// the model.
// Invariants: a pair with rank 0 adapts nothing; otherwise a has rank × cols
// floats and bp lora_panel_floats(rows, rank), for the matrix's own rows and
// cols, the padding of the last panel zero.
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

// B's packed layout: outputs in panels of kLoraPanel; panel p holds B[o][k]
// for o in [16p, 16p + 16) at k * 16 + o % 16 (rank × 16 floats, outputs
// fastest), so the kernels read B as one contiguous stream whatever the
// rank and the batch.
inline constexpr int64_t kLoraPanel = 16;
inline int64_t lora_panel_index(int64_t o, int64_t k, int64_t rank) {
  return o / kLoraPanel * rank * kLoraPanel + k * kLoraPanel + o % kLoraPanel;
}
inline int64_t lora_panel_floats(int64_t rows, int64_t rank) {
  return (rows + kLoraPanel - 1) / kLoraPanel * kLoraPanel * rank;
}

struct LoraPair {
  int32_t rank = 0;          // 0: not adapted
  float scale = 0.0f;        // alpha / rank (1 without alpha), times the adapter's scale
  int64_t rows = 0;          // the matrix's outputs
  int64_t cols = 0;          // its inputs
  // A (rank × cols, row-major) and B (in panels, lora_panel_index) as F32,
  // or, with f16 (a file whose pair is F16), as the file's F16 bits: half
  // the bytes a step streams, no value changed.
  bool f16 = false;
  std::vector<float> a, bp;
  std::vector<uint16_t> a16, bp16;
  const void* a_data() const { return f16 ? static_cast<const void*>(a16.data()) : a.data(); }
  const void* bp_data() const { return f16 ? static_cast<const void*>(bp16.data()) : bp.data(); }
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
