// LoraAdapter's helpers. Tested through tests/model/lora_load_test.cc.
#include "backend/lora_adapter.h"

namespace met {

const char* lora_target_name(LoraTarget t) {
  switch (t) {
    case LoraTarget::kQ: return "attn_q";
    case LoraTarget::kK: return "attn_k";
    case LoraTarget::kV: return "attn_v";
    case LoraTarget::kO: return "attn_output";
    case LoraTarget::kGate: return "ffn_gate";
    case LoraTarget::kUp: return "ffn_up";
    case LoraTarget::kDown: return "ffn_down";
    case LoraTarget::kOutput: return "output";
    case LoraTarget::kNone: break;
  }
  return "none";
}

namespace {

int64_t pair_bytes(const LoraPair& p) {
  return static_cast<int64_t>((p.a.size() + p.bp.size()) * sizeof(float) +
                              (p.a16.size() + p.bp16.size()) * sizeof(uint16_t));
}

}  // namespace

int64_t LoraAdapter::num_bytes() const {
  int64_t n = pair_bytes(output);
  for (const auto& layer : layers) {
    for (const LoraPair& p : layer) n += pair_bytes(p);
  }
  return n;
}

}  // namespace met
