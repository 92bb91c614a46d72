// Tests for engine/cpu_engine.h: the default KV pool's size, and an engine
// opened over a random-weight model from plain values.
#include "engine/cpu_engine.h"

#include <gtest/gtest.h>

#include <string>

#include "model/random_model.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

TEST(DefaultKvBlocks, FitsMaxSeqsSequencesOfTheContextUpTo4096Tokens) {
  EXPECT_EQ(default_kv_blocks(4, 2048, 1024), 4 * 2048 / 16);
  EXPECT_EQ(default_kv_blocks(4, 100000, 1024), 4 * 4096 / 16);
  EXPECT_EQ(default_kv_blocks(4, 0, 1024), 4 * 4096 / 16);   // unknown context
  EXPECT_EQ(default_kv_blocks(1, 20, 1024), 2);              // a partial block rounds up
}

TEST(DefaultKvBlocks, IsCappedAtTwoGiB) {
  const int64_t block_bytes = int64_t{1} << 20;  // 1 MiB blocks: 2 GiB holds 2048
  EXPECT_EQ(default_kv_blocks(64, 4096, block_bytes), 2048);
  EXPECT_EQ(default_kv_blocks(1, 16, int64_t{4} << 30), 1);  // never below one block
}

// A one-layer random model in `dir`.
std::string small_model(const testing::TempDir& dir) {
  RandomModelSpec s;
  s.num_layers = 1;
  s.vocab_size = 512;
  const std::string path = dir.file("m.gguf");
  EXPECT_TRUE(make_random_model(s, path).ok());
  return path;
}

TEST(CpuEngine, OpensAModelWithThePoolItWasGivenAndServesARequest) {
  testing::TempDir dir;
  CpuEngineConfig c;
  c.kv_blocks = 7;
  c.max_seqs = 2;
  c.max_batch_tokens = 64;
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(small_model(dir), c);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ((*e)->engine().limits().num_kv_blocks, 7);
  EXPECT_GT((*e)->context_length(), 0);
  EngineRequest r;
  r.prompt = (*e)->tokenizer().encode("hello", EncodeOptions{.add_special = true});
  r.max_tokens = 3;
  r.ignore_eos = true;
  Result<RequestHandle> h = (*e)->engine().submit(std::move(r));
  ASSERT_TRUE(h.ok()) << h.status().message();
  StreamEvent ev;
  int tokens = 0;
  while (h->next(ev)) {
    if (const auto* d = std::get_if<DeltaEvent>(&ev)) tokens += static_cast<int>(d->tokens.size());
    if (const auto* f = std::get_if<FinishEvent>(&ev)) {
      EXPECT_EQ(f->finish_reason, "length");
    }
  }
  EXPECT_EQ(tokens, 3);
}

TEST(CpuEngine, APoolTooSmallForOneBlockIsRefusedNamingWhatSizedIt) {
  testing::TempDir dir;
  CpuEngineConfig c;
  c.kv_mem_bytes = 100;
  c.pool_source = "--kv-mem 100";
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(small_model(dir), c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--kv-mem 100 holds no KV block"), std::string::npos) << e.status().message();
}

TEST(CpuEngine, AMissingModelFileIsAnError) {
  testing::TempDir dir;
  EXPECT_FALSE(CpuEngine::open(dir.file("absent.gguf"), CpuEngineConfig{}).ok());
}

}  // namespace
}  // namespace met
