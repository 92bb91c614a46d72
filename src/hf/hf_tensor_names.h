// hf_tensor_names: Hugging Face llama-family tensor names to GGUF's
// (model.layers.3.self_attn.q_proj.weight -> blk.3.attn_q.weight, as
// llama.cpp's convert_hf_to_gguf.py maps them), and the row permutation that
// turns HF's q/k projections (rope over rotate_half halves) into GGUF's
// (rope over interleaved pairs), exactly as the converter's LlamaModel.permute.
// Threading: pure. Tested by tests/hf/hf_tensor_names_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace met {

// What the loader does with a tensor of the folder.
enum class HfTensorRole : uint8_t {
  kPlain,    // copied (or viewed) as it is
  kPermute,  // q or k projection weight: rows permuted when the family needs it
  kIgnored,  // not part of the GGUF model (rotary_emb.inv_freq)
};

struct HfTensorName {
  std::string gguf_name;  // "" when ignored
  HfTensorRole role = HfTensorRole::kPlain;
  // For kPermute: whether this is the key projection (permuted by head_count_kv).
  bool is_key = false;
};

// nullopt for a name the llama family (or with `encoder`, BERT:
// embeddings.word_embeddings.weight -> token_embd.weight, encoder.layer.3.
// attention.self.query.weight -> blk.3.attn_q.weight, …) does not have.
std::optional<HfTensorName> map_hf_tensor_name(std::string_view hf_name, bool encoder = false);

// Rows of a [rows, row_bytes] matrix reordered per head of rows / num_heads
// rows: within a head, output row 2 i + h is input row h * (head_rows / 2) + i
// (h in {0, 1}). REQUIRES: rows % (2 num_heads) == 0, bytes.size() == rows *
// row_bytes.
std::vector<uint8_t> permute_rope_rows(std::span<const uint8_t> bytes, uint64_t rows, uint64_t row_bytes,
                                       uint32_t num_heads);

}  // namespace met
