// gemma4's part of make-model (random_model.cc calls it): Gemma 4 E2B's
// proportions at the presets' sizes (one global layer in every 4, a 512
// window, global heads twice as wide with half the KV heads, the last third
// or so of the layers sharing KV, per-layer embeddings of 64, 128 or 256,
// logits soft-capped at 30), the hyper-parameters llama.cpp's gemma4 loader
// reads back, their metadata keys, and the proportional-rope factors of the
// global layers (a quarter of the pairs rotate; the others get 1e30, as
// llama.cpp's converter writes them). Windowed layers have K and V; global
// layers K alone (K serves as V), so both paths run.
// Threading: pure functions. Tested by tests/model/dense_archs_test.cc.
#pragma once

#include <string_view>
#include <vector>

#include "core/status.h"
#include "gguf/gguf_value.h"
#include "model/hparams.h"
#include "model/random_model.h"

namespace met {

void apply_gemma4_preset(std::string_view name, RandomModelSpec& s);
// REQUIRES: s.arch is gemma4 and the common fields passed validate_spec.
Status validate_gemma4_spec(const RandomModelSpec& s);
void set_gemma4_hparams(const RandomModelSpec& s, ModelHParams& hp);
void write_gemma4_hparams(const ModelHParams& hp, GgufMetadata& md);
// Whether some layer is global: only then is rope_freqs.weight written
// (llama.cpp's loader reads it from the global layers and refuses a file
// whose tensors it does not read).
bool gemma4_has_global_layer(const ModelHParams& hp);
// rope_freqs.weight: head_dim_full / 2 divisors.
std::vector<float> gemma4_rope_freqs(const ModelHParams& hp);

}  // namespace met
