// CpuEngine. Tested by tests/engine/cpu_engine_test.cc.
#include "engine/cpu_engine.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "backend/cpu/huge_page_memory.h"
#include "backend/cpu/kv_cache.h"
#include "core/log.h"
#include "hf/model_loader.h"
#include "kv/kv_block.h"
#include "kv/spill_store.h"
#include "engine/device_factory.h"
#include "model/cpu_device.h"
#include "model/lora_load.h"
#include "model/model.h"
#include "spec/draft_model.h"

namespace met {
namespace {

static_assert(kMaxKvPoolBytes == cpu::kMaxKvCacheBytes, "the pool's bound is the CPU cache's");

// The KV layout of `model`'s attention layers in `dtype` (and the MTP
// block's when it runs: the layers the device's cache holds), one block.
cpu::KvLayout kv_layout(const Model& model, GgmlType dtype, bool mtp) {
  const ModelHParams& hp = model.hparams();
  cpu::KvLayout layout;
  layout.dtype = dtype;
  layout.num_layers = ForwardPass::kv_layers(model, mtp);
  layout.num_kv_heads = static_cast<int32_t>(hp.num_kv_heads);
  layout.head_dim = static_cast<int32_t>(hp.head_dim);
  layout.num_blocks = 1;
  return layout;
}

// The target's device: the pool, the threads, and room for an output per
// verify row as well as per decode row (prompt lookup's drafts, a predicted
// output's, a draft model's).
CpuDeviceOptions device_options(const CpuEngineConfig& config, const ModelHParams& hp, GgmlType kv_dtype,
                                int32_t num_blocks, int32_t num_snapshots) {
  CpuDeviceOptions dopt;
  dopt.num_threads = config.num_threads;
  dopt.kv_dtype = kv_dtype;
  dopt.num_kv_blocks = num_blocks;
  const int32_t drafts = std::max({config.spec_lookup, SpecOptions{}.prediction_draft,
                                   config.draft_model_path.empty() ? 0 : config.draft_max,
                                   config.spec_mtp ? config.spec_mtp_drafts : 0});
  const int64_t outputs = int64_t{config.max_seqs} * (1 + drafts);
  dopt.limits = ForwardLimits{.max_rows = config.max_batch_tokens,
                              .max_outputs = static_cast<int32_t>(std::min<int64_t>(outputs, config.max_batch_tokens)),
                              .max_seqs = config.max_seqs};
  dopt.forward.mtp = config.spec_mtp;
  dopt.forward.mtp_chain = config.spec_mtp ? config.spec_mtp_drafts - 1 : 0;
  dopt.num_adapter_slots = config.max_loras;
  dopt.forward.max_lora_rank = config.max_loras > 0 ? config.max_lora_rank : 0;
  if (hp.is_hybrid()) {
    dopt.num_state_snapshots = num_snapshots;
    dopt.state_rollback = config.state_rollback;
    dopt.state_drafts = config.state_drafts < 0 ? drafts : config.state_drafts;
  }
  return dopt;
}

EngineOptions engine_options(const CpuEngineConfig& config, DraftModel* drafter) {
  EngineOptions eopt;
  eopt.scheduler.max_seqs = config.max_seqs;
  eopt.scheduler.max_batch_tokens = config.max_batch_tokens;
  eopt.scheduler.preempt = config.preempt;
  eopt.scheduler.pipeline = config.pipeline;
  SpecOptions& spec = eopt.scheduler.spec;
  spec.max_draft = config.spec_lookup;
  spec.min_ngram = config.spec_min_ngram;
  spec.max_ngram = config.spec_max_ngram;
  spec.adaptive = config.spec_adaptive;
  spec.draft_model = drafter;
  spec.model_draft = config.draft_max;
  spec.mtp = config.spec_mtp;
  eopt.state_snapshot_blocks = config.state_snapshot_blocks;
  eopt.streams = config.streams;
  return eopt;
}

}  // namespace

Status check_draft_vocab(const Vocab& target, const Vocab& draft) {
  if (draft.size() != target.size()) {
    return invalid_argument("the draft model's vocabulary has {} tokens; the model's has {}", draft.size(),
                            target.size());
  }
  for (size_t i = 0; i < target.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    if (draft.token(id).text != target.token(id).text) {
      return invalid_argument("the draft model's token {} is {:?}; the model's is {:?}", i, draft.token(id).text,
                              target.token(id).text);
    }
  }
  return Status();
}

int32_t default_kv_blocks(int32_t max_seqs, int64_t context_length, int64_t block_bytes) {
  const int64_t tokens_per_seq =
      context_length > 0 ? std::min(context_length, kDefaultKvTokensPerSeq) : kDefaultKvTokensPerSeq;
  const int64_t blocks_per_seq = blocks_for_tokens(tokens_per_seq);
  int64_t blocks = std::max<int64_t>(max_seqs, 1) * blocks_per_seq;
  if (block_bytes > 0) blocks = std::min(blocks, kDefaultKvMaxBytes / block_bytes);
  blocks = std::clamp<int64_t>(blocks, 1, std::numeric_limits<int32_t>::max());
  return static_cast<int32_t>(blocks);
}

Result<PoolSplit> split_kv_budget(const CpuEngineConfig& c, int64_t context_length, int64_t block_bytes,
                                  int64_t state_bytes) {
  const bool hybrid = state_bytes > 0;
  PoolSplit split;
  if (c.kv_blocks.has_value() || (sizes_kv_pool_itself(c.device) && !c.kv_mem_bytes.has_value())) {
    split.blocks = c.kv_blocks.value_or(0);  // 0: the device's free memory sizes it
    split.snapshots = !hybrid ? 0 : c.state_snapshots < 0 ? c.max_seqs : c.state_snapshots;
    return split;
  }
  const int64_t budget = c.kv_mem_bytes.has_value()
                             ? *c.kv_mem_bytes
                             : default_kv_blocks(c.max_seqs, context_length, block_bytes) * block_bytes;
  if (hybrid) {
    const int64_t fit = budget / kSnapshotBudgetDivisor / state_bytes;
    split.snapshots = c.state_snapshots >= 0 ? c.state_snapshots
                                             : static_cast<int32_t>(std::min<int64_t>(c.max_seqs, fit));
  }
  const int64_t rest = budget - int64_t{split.snapshots} * state_bytes;
  if (rest < block_bytes && !hybrid) {
    return invalid_argument("{} holds no KV block of this model ({} bytes each)", c.pool_source, block_bytes);
  }
  if (rest < block_bytes) {
    return invalid_argument("{} holds no KV block of this model ({} bytes each) beside {} recurrent-state "
                            "snapshots of {} bytes each (--state-snapshots)",
                            c.pool_source, block_bytes, split.snapshots, state_bytes);
  }
  split.blocks = static_cast<int32_t>(std::min<int64_t>(rest / block_bytes, std::numeric_limits<int32_t>::max()));
  return split;
}

CpuEngine::CpuEngine() = default;
CpuEngine::~CpuEngine() { engine_.reset(); }

const GgufMetadata& CpuEngine::metadata() const { return model_->file().metadata(); }
int64_t CpuEngine::context_length() const { return static_cast<int64_t>(model_->hparams().context_length); }
int64_t CpuEngine::device_busy_ns() const { return device_->busy_ns(); }

Result<std::unique_ptr<CpuEngine>> CpuEngine::open(const std::string& model_path, const CpuEngineConfig& config,
                                                   const Progress& progress) {
  MET_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                       load_model(model_path, progress, weight_packing_for(config.device)));
  if (config.device == "cpu" && cpu::transparent_huge_page_mode() == "never") {
    MET_LOG_WARN("transparent huge pages are off (/sys/kernel/mm/transparent_hugepage/enabled is never): "
                 "decode reads the weights in 4 KiB pages, up to half as fast; 'madvise' is enough");
  }
  MET_ASSIGN_OR_RETURN(std::unique_ptr<CpuEngine> e, create(*model, config));
  e->owned_model_ = std::move(model);
  return e;
}

Result<std::unique_ptr<CpuEngine>> CpuEngine::create(const Model& model, const CpuEngineConfig& config) {
  std::unique_ptr<CpuEngine> e(new CpuEngine());
  e->model_ = &model;
  MET_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(model.file().metadata()));
  e->tokenizer_ = std::make_unique<Tokenizer>(std::move(tok));
  const ModelHParams& hp = e->model_->hparams();
  if (config.spec_mtp && hp.nextn_predict_layers == 0) {
    return invalid_argument("--spec-mtp: the model has no MTP block (its nextn_predict_layers is 0)");
  }
  const cpu::KvLayout layout = kv_layout(*e->model_, config.kv_dtype, config.spec_mtp);
  Result<int64_t> block_bytes = cpu::kv_block_bytes(layout);
  if (!block_bytes.ok()) {
    return block_bytes.status().with_prefix(fmt::format("KV dtype {}", ggml_type_name(config.kv_dtype)));
  }
  const auto state_bytes = static_cast<int64_t>(hp.is_hybrid() ? hp.recurrent_state_bytes() : 0);
  MET_ASSIGN_OR_RETURN(const PoolSplit split, split_kv_budget(config, hp.context_length, *block_bytes, state_bytes));
  const int32_t num_blocks = split.blocks;
  if (state_bytes > 0) {
    MET_LOG_INFO("KV budget: {} blocks of {} bytes and {} recurrent-state snapshots of {} bytes", split.blocks,
                 *block_bytes, split.snapshots, state_bytes);
  }

  const CpuDeviceOptions dopt = device_options(config, hp, layout.dtype, num_blocks, split.snapshots);
  Result<std::unique_ptr<Device>> device = make_engine_device(config.device, *e->model_, dopt);
  if (!device.ok()) {
    if (config.device != "cpu") return device.status().with_prefix(fmt::format("--device {}", config.device));
    const bool sized = config.kv_blocks.has_value() || config.kv_mem_bytes.has_value();
    return device.status().with_prefix(sized ? config.pool_source
                                             : fmt::format("{} ({} blocks)", config.pool_source, num_blocks));
  }
  e->device_ = std::move(*device);
  if (!config.spill_dir.empty()) {
    Result<std::unique_ptr<SpillStore>> spill = SpillStore::create(config.spill_dir);
    if (!spill.ok()) return spill.status().with_prefix(fmt::format("spill directory {}", config.spill_dir));
    e->spill_ = std::move(*spill);
  }
  if (!config.draft_model_path.empty()) MET_RETURN_IF_ERROR(e->open_draft(config));
  MET_RETURN_IF_ERROR(e->open_adapters(config));
  EngineOptions eopt = engine_options(config, e->drafter_.get());
  if (!config.kv_events.endpoint.empty()) {
    MET_ASSIGN_OR_RETURN(e->kv_events_, KvEventPublisher::create(config.kv_events));
    eopt.kv_events = e->kv_events_.get();
  }
  MET_ASSIGN_OR_RETURN(e->engine_, Engine::create(*e->device_, *e->tokenizer_, e->spill_.get(), e->clock_,
                                                  std::move(eopt)));
  return e;
}

Status CpuEngine::open_adapters(const CpuEngineConfig& config) {
  if (config.max_loras < 0 || config.max_loras > kMaxLorasFlag) {
    return invalid_argument("--max-loras {} is outside 0 to {}", config.max_loras, kMaxLorasFlag);
  }
  if (config.max_lora_rank < 1 || config.max_lora_rank > kMaxLoraRankFlag) {
    return invalid_argument("--max-lora-rank {} is outside 1 to {}", config.max_lora_rank, kMaxLoraRankFlag);
  }
  if (!config.loras.empty() && config.max_loras == 0) {
    return invalid_argument("--lora needs --max-loras of at least 1 (adapter slots)");
  }
  max_loras_ = config.max_loras;
  const Model& model = *model_;
  const int32_t max_rank = config.max_lora_rank;
  adapters_ = std::make_unique<AdapterRegistry>(
      [&model, max_rank](const std::string& path, const std::string& name)
          -> Result<std::shared_ptr<const LoraAdapter>> {
        MET_ASSIGN_OR_RETURN(std::shared_ptr<const LoraAdapter> a, load_lora(path, model, name));
        if (a->max_rank > max_rank) {
          return invalid_argument("{}: rank {}; this server runs ranks up to {} (--max-lora-rank)", path, a->max_rank,
                                  max_rank);
        }
        return a;
      });
  for (const auto& [name, path] : config.loras) {
    MET_RETURN_IF_ERROR(adapters_->load(name, path).with_prefix(fmt::format("--lora {}", name)));
  }
  return ok_status();
}

Status CpuEngine::open_draft(const CpuEngineConfig& config) {
  const std::string& path = config.draft_model_path;
  Result<std::unique_ptr<Model>> model = load_model(path);
  if (!model.ok()) return model.status().with_prefix(fmt::format("draft model {}", path));
  draft_model_ = std::move(*model);
  const ModelHParams& hp = draft_model_->hparams();
  Result<Tokenizer> tok = Tokenizer::from_gguf(draft_model_->file().metadata());
  if (!tok.ok()) return tok.status().with_prefix(fmt::format("draft model {}", path));
  const Status vocab = check_draft_vocab(tokenizer_->vocab(), tok->vocab());
  if (!vocab.ok()) return vocab.with_prefix(fmt::format("draft model {}", path));
  const cpu::KvLayout layout = kv_layout(*draft_model_, config.kv_dtype, false);
  MET_ASSIGN_OR_RETURN(int64_t block_bytes, cpu::kv_block_bytes(layout));
  CpuDeviceOptions dopt;
  dopt.num_threads = config.num_threads;
  dopt.kv_dtype = layout.dtype;
  dopt.num_kv_blocks = default_kv_blocks(config.max_seqs, hp.context_length, block_bytes);
  dopt.limits = ForwardLimits{.max_rows = config.max_batch_tokens, .max_outputs = config.max_seqs,
                              .max_seqs = config.max_seqs};
  // Recurrent layers: a slot per sequence, whose ring keeps the state after
  // each draft fed, so a rejected one is rewound (spec/draft_model.h).
  dopt.state_rollback = std::min(config.draft_max, cpu::kMaxStateRollback);
  Result<std::unique_ptr<CpuDevice>> device = CpuDevice::create(*draft_model_, dopt);
  if (!device.ok()) return device.status().with_prefix(fmt::format("draft model {}", path));
  draft_device_ = std::move(*device);
  drafter_ = std::make_unique<DraftModel>(*draft_device_);
  return Status();
}

}  // namespace met
