// EngineFlags: the engine options shared by `met run`, `met bench` and
// `met serve` (--threads, --kv-dtype, --kv-mem | --kv-blocks, --max-seqs,
// --max-batch-tokens, --spill-dir, --preempt), and build_cpu_engine(), which
// turns them into a CpuEngine: the CpuDevice, the optional SpillStore, the
// clock and the Engine over them, owned together.
// Invariants: a CpuEngine's engine is destroyed first (it borrows the others);
// every bad value is refused with one line naming the flag and the value,
// before the KV pool is allocated.
// Threading: main thread. Tested by tests/cli/engine_flags_test.cc and
// through the commands by tests/cli/run_command_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "core/clock.h"
#include "core/status.h"
#include "engine/engine.h"
#include "kv/spill_store.h"
#include "model/cpu_device.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace met {

// The default pool holds max_seqs sequences of min(context, this) tokens...
inline constexpr int64_t kDefaultKvTokensPerSeq = 4096;
// ... but no more than this many bytes.
inline constexpr int64_t kDefaultKvMaxBytes = int64_t{2} << 30;

// Past these, --max-seqs and --max-batch-tokens are typos (the device sizes
// its scratch buffers by them).
inline constexpr int32_t kMaxSeqsFlag = 4096;
inline constexpr int32_t kMaxBatchTokensFlag = 65536;

struct EngineFlags {
  int threads = 0;                    // 0: all cores
  std::string kv_dtype = "f16";
  std::string kv_mem;                 // "": not given
  std::optional<int32_t> kv_blocks;
  int32_t max_seqs = 64;
  int32_t max_batch_tokens = 512;
  std::string spill_dir;              // "": no spill store
  std::string preempt;                // "": swap with a spill dir, else recompute
  std::string pipeline = "on";        // on: launch decode steps ahead (decode_lane.h)
};

// Registers the flags on `cmd`; they write into `flags`, which outlives it.
void add_engine_flags(CLI::App& cmd, EngineFlags& flags);

// "512", "64K", "64KiB", "1.5G", "2GiB" -> bytes (K, M, G are binary like
// KiB, MiB, GiB). The message names --kv-mem and the text.
Result<int64_t> parse_kv_mem(std::string_view text);

// The pool's size when neither --kv-mem nor --kv-blocks is given: max_seqs
// sequences of min(context_length, kDefaultKvTokensPerSeq) tokens (4096 when
// the context is unknown), capped at kDefaultKvMaxBytes, at least one block.
int32_t default_kv_blocks(int32_t max_seqs, int64_t context_length, int64_t block_bytes);

// The engine and what it borrows, destroyed engine first.
struct CpuEngine {
  std::unique_ptr<CpuDevice> device;
  std::unique_ptr<SpillStore> spill;  // null without --spill-dir
  RealClock clock;
  PreemptMode preempt = PreemptMode::kRecompute;
  std::unique_ptr<Engine> engine;     // last: destroyed first
};

// Checks the flags, sizes the KV pool, and starts the engine over a
// CpuDevice for `model`, each client's unsent bytes bounded by `streams`.
// Both `model` and `tokenizer` must outlive the result.
Result<std::unique_ptr<CpuEngine>> build_cpu_engine(const Model& model, const Tokenizer& tokenizer,
                                                    const EngineFlags& flags, StreamLimits streams = {});

// Checks only the flags (no model needed), so a command can refuse bad ones
// before loading anything.
Status validate_engine_flags(const EngineFlags& flags);

}  // namespace met
