// EngineFlags: the engine options shared by `met run`, `met bench` and
// `met serve` (--threads, --kv-dtype, --kv-mem | --kv-blocks, --max-seqs,
// --max-batch-tokens, --spill-dir, --preempt, --pipeline, the hybrid models'
// --state-*, speculative decoding's --spec-* and LoRA's --lora, --max-loras,
// --max-lora-rank; and serve's --kv-events-*), and
// engine_config(), which turns them into the CpuEngineConfig the commands
// open their engine with (engine/cpu_engine.h).
// Invariants: every bad value is refused with one line naming the flag and
// the value, before anything is loaded or allocated.
// Threading: main thread. Tested by tests/cli/engine_flags_test.cc and
// through the commands by tests/cli/run_command_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/status.h"
#include "engine/cpu_engine.h"

namespace met {

// Past these, --max-seqs and --max-batch-tokens are typos (the device sizes
// its scratch buffers by them).
inline constexpr int32_t kMaxSeqsFlag = 4096;
inline constexpr int32_t kMaxBatchTokensFlag = 65536;

struct EngineFlags {
  int threads = 0;                    // 0: all cores
  std::string kv_dtype = "f16";
  std::string device = "cpu";  // cpu, cuda, or grid-host (CUDA's program on the host, for tests)
  std::string kv_mem;                 // "": not given
  std::optional<int32_t> kv_blocks;
  int32_t max_seqs = 64;
  int32_t max_batch_tokens = 512;
  std::string spill_dir;              // "": no spill store
  std::string preempt;                // "": swap with a spill dir, else recompute
  std::string pipeline = "on";        // on: launch decode steps ahead (decode_lane.h)
  int32_t state_snapshots = -1;       // hybrid models' prefix cache: -1 as many as --max-seqs
  int32_t state_snapshot_blocks = 16;
  int32_t state_rollback = 0;  // hybrid models: tokens a sequence's state can be rewound
  int32_t state_drafts = -1;   // hybrid models: drafts one verify step keeps states for (-1: every source's most)
  int32_t spec_lookup = 0;     // speculative decoding: prompt-lookup drafts per step (0: off)
  int32_t spec_ngram_min = 2;
  int32_t spec_ngram_max = 5;
  std::string draft_model;      // speculative decoding: a draft model's GGUF ("": none)
  int32_t draft_max = 4;        // its drafts per step
  bool spec_mtp = false;        // speculative decoding: the model's MTP block drafts
  int32_t spec_mtp_drafts = 3;  // its drafts per step (the block fed its own guesses past the first)
  std::string spec_adaptive = "on";  // on: drafts within the draft budget (spec/draft_budget.h)
  std::vector<std::string> loras;  // LoRA adapters loaded at start: NAME=PATH (or PATH, named by its stem)
  int32_t max_loras = -1;          // adapter slots (-1: one per --lora)
  int32_t max_lora_rank = 64;
  // KV events for prefix-aware routers (met serve only; engine/kv_event_publisher.h).
  std::string kv_events_endpoint;         // "": off
  std::string kv_events_replay_endpoint;  // "": no replay socket
  std::string kv_events_topic;
  int32_t kv_events_buffer = 10000;       // batches kept for replay
};

// Registers the flags on `cmd`; they write into `flags`, which outlives it.
void add_engine_flags(CLI::App& cmd, EngineFlags& flags);
// Registers --kv-events-* (a server's flags: only `met serve` publishes).
void add_kv_event_flags(CLI::App& cmd, EngineFlags& flags);

// "512", "64K", "64KiB", "1.5G", "2GiB" -> bytes (K, M, G are binary like
// KiB, MiB, GiB). The message names --kv-mem and the text.
Result<int64_t> parse_kv_mem(std::string_view text);

// The engine configuration the flags describe, for CpuEngine::open (each
// client's unsent bytes bounded by `streams`). Checks the flags first.
Result<CpuEngineConfig> engine_config(const EngineFlags& flags, StreamLimits streams = {});

// Checks only the flags (no model needed), so a command can refuse bad ones
// before loading anything.
Status validate_engine_flags(const EngineFlags& flags);

}  // namespace met
