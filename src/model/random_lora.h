// make_random_lora: writes a random LoRA adapter for a base GGUF model, in
// llama.cpp's adapter form (lora_load.h), deterministic for a seed: for
// each of the base's matrices among `targets` (every layer's, and the head
// for kOutput), lora_a [cols, rank] uniform with variance 1/cols and lora_b
// [rank, rows] uniform with variance strength² / rank, so with alpha = rank
// (scale 1) the update B·A·x is about `strength` times as large as W·x for
// the uniform weights of make_random_model. Tensors are written in `dtype`
// (F32, F16, BF16 or Q8_0; Q8_0 needs the rank and every matrix's inputs to
// be multiples of 32).
// Threading: one thread. Tested by tests/model/lora_load_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/lora_adapter.h"
#include "core/status.h"
#include "gguf/ggml_type.h"

namespace met {

struct RandomLoraSpec {
  int32_t rank = 16;
  std::vector<LoraTarget> targets;  // empty: every target but kOutput
  uint64_t seed = 0;
  float alpha = 0.0f;  // 0: the rank (scale 1)
  GgmlType dtype = GgmlType::kF32;
  float strength = 0.5f;
};

// Parses "q,k,v,o,gate,up,down,output" (any subset, in any order).
Result<std::vector<LoraTarget>> parse_lora_targets(std::string_view list);

struct RandomLoraSummary {
  int num_pairs = 0;  // adapted matrices
  uint64_t num_bytes = 0;  // of the file
};

Result<RandomLoraSummary> make_random_lora(const std::string& base_path, const std::string& out_path,
                                           const RandomLoraSpec& spec);

}  // namespace met
