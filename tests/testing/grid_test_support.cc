// The GridDevice tests' shared parts (see grid_test_support.h).
#include "testing/grid_test_support.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "testing/model_test_support.h"
#include "testing/reference_forward.h"

namespace met::testing {

GridDeviceOptions test_grid_options(GgmlType kv) {
  GridDeviceOptions o;
  o.kv_dtype = kv;
  o.num_kv_blocks = 64;
  o.limits = {.max_rows = 64, .max_outputs = 32, .max_seqs = 8};
  o.max_context = 1024;
  return o;
}

std::unique_ptr<GridDevice> make_test_grid(const Model& model, GgmlType kv,
                                           std::unique_ptr<cuda::GridBackend> backend) {
  if (backend == nullptr) backend = cuda::make_host_grid_backend();
  auto d = GridDevice::create(model, std::move(backend), test_grid_options(kv));
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  return d.ok() ? std::move(d).value() : nullptr;
}

RandomModelSpec wide_model_spec(GgmlType dtype) {
  RandomModelSpec s = small_model_spec(Arch::kLlama, dtype);
  s.num_layers = 1;
  s.embedding_length = 1024;
  s.num_heads = 8;
  s.num_kv_heads = 2;
  s.feed_forward_length = 1024;
  s.vocab_size = 512;
  return s;
}

void expect_grid_logits(Device& dev, Device& fresh, const Model& model, int32_t num_tokens, int32_t prefill,
                        int32_t chunk, int32_t singles) {
  const std::vector<TokenId> tokens = fixed_prompt(static_cast<size_t>(num_tokens), model.hparams().vocab_size);
  const int32_t blocks = (num_tokens + 15) / 16;
  const auto chunked = logits_at_every_position(dev, tokens, prefill, chunk, block_range(0, blocks));
  ASSERT_EQ(chunked.size(), tokens.size());
  expect_logits_agree(ReferenceForward(model).logits(tokens), chunked, 1e-4);
  if (singles == 0) return;
  const auto one_a_step = logits_at_every_position(
      fresh, std::span<const TokenId>(tokens).first(static_cast<size_t>(singles)), 0, 1, block_range(0, blocks));
  ASSERT_EQ(one_a_step.size(), static_cast<size_t>(singles));
  for (size_t pos = 0; pos < one_a_step.size(); ++pos) {
    EXPECT_EQ(chunked[pos], one_a_step[pos]) << "position " << pos << ": the chunking changed the bits";
  }
}

}  // namespace met::testing
