// How make_random_model fills a made model's tensors: each row from a
// seeded generator (uniform with variance 1/fan_in for matrices, ones for
// norms, the roles' own ranges elsewhere), quantized to the file's type;
// RandomModelSpec's fixtures (an MTP block copying the last attention
// layer, scaled residual branches, a head that names each token's
// successor). Threading: pure functions; a Fill runs its rows on
// num_threads threads. Tested by tests/model/random_model_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "model/random_model.h"

namespace met {

// The type tensor `t` is stored as: `wanted` for matrices whose rows fit its
// blocks, else Q8_0 or F16 (noted in `fallbacks`); F32 for the rest.
GgmlType storage_type(const TensorSpec& t, GgmlType wanted, std::vector<std::string>& fallbacks);

// Tensor `t`'s rows, filled from `tensor_seed` by its role and multiplied by
// `scale`, as `type`.
GgufWriter::Fill tensor_fill(const TensorSpec& t, GgmlType type, uint64_t tensor_seed, int num_threads,
                             float scale);

// RandomModelSpec::branch_scale's tensors (the layers' output projections).
bool is_branch_output(const std::string& name);

// Row r of eh_proj [2 embd, embd] is e_r: out = enorm(e), the next token's
// embedding path (RandomModelSpec::mtp_copies_last_layer).
GgufWriter::Fill embedding_path_fill(const TensorSpec& t, GgmlType type);

// RandomModelSpec::successor_head's permutation of the vocab: (a token + 1)
// mod vocab_size, a the first integer from 5/8 of vocab_size up that is
// coprime to it.
uint32_t successor_token(uint32_t token, uint32_t vocab_size);

// output.weight [embd, vocab] whose row successor_token(t) is token_embd's
// row t as tensor_fill(token_embd, ..., embedding_seed, ..., 1) draws it
// (RandomModelSpec::successor_head).
GgufWriter::Fill successor_head_fill(const TensorSpec& t, GgmlType type, uint64_t embedding_seed, int num_threads);

// Each tensor's seed; with mtp_copies_last_layer, an MTP block's layer
// tensor takes the seed of the same tensor of the trunk's last attention
// layer (so the same values).
std::vector<uint64_t> tensor_seeds(const RandomModelSpec& spec, const ModelHParams& hp,
                                   const std::vector<TensorSpec>& specs);

}  // namespace met
