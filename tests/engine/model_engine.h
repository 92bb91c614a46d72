// ModelEngine: a real model (a GGUF path), its tokenizer and an Engine over a
// CpuDevice with a given KV pool and thread count, for the engine tests on
// stories260K and on made MoE models.
// Threading: the test's thread. Never linked into apps/.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "engine/engine.h"
#include "kv/spill_store.h"
#include "model/cpu_device.h"
#include "model/model.h"

namespace met::testing {

// A model, its tokenizer and an engine over a CpuDevice with `num_blocks`
// (and, for a recurrent model, `state_rollback` older state versions, and
// states kept for as many drafts as `spec` may verify), with speculative
// decoding as `spec` says.
class ModelEngine {
 public:
  ModelEngine(const std::string& path, int32_t num_blocks, int32_t max_seqs, std::optional<std::string> spill_dir,
              bool pipeline = true, int num_threads = 1, int32_t state_rollback = 0, SpecOptions spec = {}) {
    model_ = std::move(*Model::load(path));
    tokenizer_ = std::make_unique<Tokenizer>(std::move(*Tokenizer::from_gguf(model_->file().metadata())));
    CpuDeviceOptions d;
    d.num_threads = num_threads;
    d.num_kv_blocks = num_blocks;
    d.kv_dtype = GgmlType::kF32;
    const int32_t drafts = std::max(spec.max_draft, spec.prediction_draft);
    d.limits = ForwardLimits{.max_rows = 128, .max_outputs = std::min(128, max_seqs * (1 + drafts)),
                             .max_seqs = max_seqs};
    d.state_rollback = state_rollback;  // recurrent models: the decode rollback ring
    d.state_drafts = drafts;
    d.forward.mtp = spec.mtp;  // the model's MTP block runs when it drafts
    device_ = std::move(*CpuDevice::create(*model_, d));
    EngineOptions eo;
    eo.scheduler.max_seqs = max_seqs;
    eo.scheduler.max_batch_tokens = 128;
    eo.scheduler.pipeline = pipeline;
    eo.scheduler.spec = spec;
    if (spill_dir) {
      store_ = std::move(*SpillStore::create(*spill_dir));
      eo.scheduler.preempt = PreemptMode::kSwap;
    }
    Result<std::unique_ptr<Engine>> e = Engine::create(*device_, *tokenizer_, store_.get(), clock_, eo);
    EXPECT_TRUE(e.ok()) << e.status().message();
    engine_ = std::move(*e);
  }

  Engine& engine() { return *engine_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  RealClock clock_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<CpuDevice> device_;
  std::unique_ptr<SpillStore> store_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace met::testing
