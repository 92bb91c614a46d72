// CpuEngine: a GGUF model served by an Engine over a CpuDevice: the model,
// its tokenizer, the device, the optional spill store, the clock and the
// engine, made from plain values (CpuEngineConfig) and owned together. It is
// how `met run`, `met serve` and `met bench` get an engine, so the commands
// reach the model, the device and the KV pool only through engine/.
// Invariants: the engine is destroyed first (it borrows the rest); the KV
// pool is sized (default_kv_blocks, or the config's blocks or bytes) before
// anything is allocated, and every refusal names what sized it.
// Threading: open() and the accessors on the caller's thread; the engine is
// then used as engine.h says. Tested by tests/engine/cpu_engine_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/recurrent_state.h"
#include "core/clock.h"
#include "core/status.h"
#include "engine/adapter_registry.h"
#include "engine/engine.h"
#include "scheduler/speculation.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_value.h"
#include "tokenizer/tokenizer.h"

namespace met {

class CpuDevice;
class DraftModel;
class Model;
class SpillStore;

// The default pool holds max_seqs sequences of min(context, this) tokens...
inline constexpr int64_t kDefaultKvTokensPerSeq = 4096;
// ... but no more than this many bytes.
inline constexpr int64_t kDefaultKvMaxBytes = int64_t{2} << 30;

// The largest KV pool one may ask for.
inline constexpr int64_t kMaxKvPoolBytes = int64_t{1} << 40;

// The pool's size when neither blocks nor bytes are given: max_seqs
// sequences of min(context_length, kDefaultKvTokensPerSeq) tokens (4096 when
// the context is unknown), capped at kDefaultKvMaxBytes, at least one block.
int32_t default_kv_blocks(int32_t max_seqs, int64_t context_length, int64_t block_bytes);

// Hybrid recurrent models: the prefix cache's state snapshots take at most
// this share of the KV budget unless --state-snapshots says how many.
inline constexpr int64_t kSnapshotBudgetDivisor = 4;

struct CpuEngineConfig;

// How the KV budget is spent: blocks, and (hybrid models, `state_bytes` > 0
// a sequence) the prefix cache's state snapshots. The snapshots count in the
// budget: with --kv-mem (or the default pool's bytes) they come out of it
// (as many as --state-snapshots, by default max_seqs but at most a quarter
// of the budget) and the rest is blocks. --kv-blocks sizes the blocks alone,
// the snapshots beside them (max_seqs by default). An error names the flags
// when the snapshots leave no room for a block.
struct PoolSplit {
  int32_t blocks = 0;  // 0: the device sizes its pool itself
  int32_t snapshots = 0;
};
Result<PoolSplit> split_kv_budget(const CpuEngineConfig& c, int64_t context_length, int64_t block_bytes,
                                  int64_t state_bytes);

struct CpuEngineConfig {
  int32_t num_threads = 1;
  GgmlType kv_dtype = GgmlType::kF16;  // F16, BF16, F32 or Q8_0
  // Where the model's steps run: "cpu" (CpuDevice), "cuda" (GridDevice on
  // CUDA device 0; a MET_CUDA build), "grid-host" (GridDevice on the host
  // backend: the CUDA device's program, slowly, without a GPU).
  std::string device = "cpu";
  // The KV pool: kv_blocks blocks, else kv_mem_bytes, else default_kv_blocks.
  std::optional<int32_t> kv_blocks;
  std::optional<int64_t> kv_mem_bytes;
  // What sized the pool, as errors about it name it ("--kv-mem 512M").
  std::string pool_source = "the default KV pool";
  int32_t max_seqs = 64;
  int32_t max_batch_tokens = 512;
  std::string spill_dir;  // "": no spill store
  PreemptMode preempt = PreemptMode::kRecompute;  // kSwap needs spill_dir
  bool pipeline = true;
  // Hybrid recurrent models: state snapshots the prefix cache keeps (-1: as
  // many as max_seqs within a quarter of the KV budget, split_kv_budget; 0:
  // no prefix reuse) and the blocks between two.
  int32_t state_snapshots = -1;
  int32_t state_snapshot_blocks = 16;
  // Hybrid recurrent models: tokens a running sequence's state can be
  // rewound (CpuDeviceOptions::state_rollback). Off by default: each layer
  // then copies its state into the version a step writes, which at batch 16
  // cost about half the decode speed of a medium qwen35 (bench/peer/README).
  int32_t state_rollback = 0;
  // Hybrid recurrent models: drafts a sequence may verify per step
  // (CpuDeviceOptions::state_drafts); -1: the most any draft source asks
  // (prompt lookup's, a predicted output's, the draft model's).
  int32_t state_drafts = -1;
  // Speculative decoding by prompt lookup (scheduler/speculation.h): drafts
  // per step (0: off) and the n-gram lengths matched.
  int32_t spec_lookup = 0;
  int32_t spec_min_ngram = 2;
  int32_t spec_max_ngram = 5;
  bool spec_adaptive = true;  // SpecOptions::adaptive
  // Speculative decoding by a draft model with the same vocabulary ("": none),
  // run on a CpuDevice of its own with its own KV pool (max_seqs sequences of
  // its context, as default_kv_blocks sizes it), and its drafts per step.
  std::string draft_model_path;
  int32_t draft_max = 4;
  // Speculative decoding by the model's own MTP block (its first nextn
  // block runs after the trunk on every row: ForwardOptions::mtp).
  bool spec_mtp = false;
  // Its drafts per step: past the first, the block is fed its own guesses
  // (ForwardOptions::mtp_chain = spec_mtp_drafts - 1). 1 to kMaxMtpDrafts.
  int32_t spec_mtp_drafts = 3;
  // LoRA adapters: slots for adapters resident at once (--max-loras; 0: no
  // adapters), the highest rank they may have, and those loaded at start
  // (--lora NAME=PATH, in order).
  int32_t max_loras = 0;
  int32_t max_lora_rank = 64;
  std::vector<std::pair<std::string, std::string>> loras;
  StreamLimits streams;  // each client's unsent-bytes bound
  // KV events for prefix-aware routers (engine/kv_event_publisher.h); off
  // while kv_events.endpoint is "".
  KvEventOptions kv_events;
};

// The bounds of CpuEngineConfig::max_loras and max_lora_rank.
inline constexpr int32_t kMaxLorasFlag = 64;
inline constexpr int32_t kMaxLoraRankFlag = 512;

// The most drafts CpuEngineConfig::spec_lookup may ask for per step.
inline constexpr int32_t kMaxSpecLookupFlag = kMaxDraftTokens;
// The most CpuEngineConfig::spec_mtp_drafts.
inline constexpr int32_t kMaxSpecMtpDraftsFlag = kMaxMtpDrafts;

// Checks that a draft model's vocabulary is the target's: the same tokens
// with the same text, naming the first that differs.
Status check_draft_vocab(const Vocab& target, const Vocab& draft);

// The most tokens CpuEngineConfig::state_rollback may ask for.
inline constexpr int32_t kMaxStateRollbackFlag = cpu::kMaxStateRollback;

class CpuEngine {
 public:
  // Called while the model binds and repacks its weights: (done, total) bytes.
  using Progress = std::function<void(size_t, size_t)>;

  // Loads the model, reads its tokenizer, sizes the KV pool and starts the
  // engine.
  static Result<std::unique_ptr<CpuEngine>> open(const std::string& model_path, const CpuEngineConfig& config,
                                                 const Progress& progress = {});
  // The same over a model the caller loaded and keeps (it must outlive the
  // result): for a tool that also measures the model itself.
  static Result<std::unique_ptr<CpuEngine>> create(const Model& model, const CpuEngineConfig& config);
  ~CpuEngine();

  Engine& engine() { return *engine_; }
  // The loaded LoRA adapters (CpuEngineConfig::loras first); loading more
  // needs max_loras > 0.
  AdapterRegistry& adapters() { return *adapters_; }
  int32_t max_loras() const { return max_loras_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const GgufMetadata& metadata() const;
  int64_t context_length() const;
  const Clock& clock() const { return clock_; }
  // Nanoseconds the device has spent running steps (for idle shares).
  int64_t device_busy_ns() const;

 private:
  CpuEngine();
  // Loads config.draft_model_path and starts its device and drafter.
  Status open_draft(const CpuEngineConfig& config);
  // Checks the adapter flags, makes the registry and loads config.loras.
  Status open_adapters(const CpuEngineConfig& config);

  std::unique_ptr<Model> owned_model_;  // null when the model is borrowed
  const Model* model_ = nullptr;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<SpillStore> spill_;
  // The draft model (CpuEngineConfig::draft_model_path), its device and the
  // drafter over it; null without one.
  std::unique_ptr<Model> draft_model_;
  std::unique_ptr<CpuDevice> draft_device_;
  std::unique_ptr<DraftModel> drafter_;
  RealClock clock_;
  std::unique_ptr<AdapterRegistry> adapters_;
  int32_t max_loras_ = 0;
  std::unique_ptr<KvEventPublisher> kv_events_;  // null when KV events are off
  std::unique_ptr<Engine> engine_;  // last: destroyed first
};

}  // namespace met
