// EngineFlags. Tested by tests/cli/engine_flags_test.cc.
#include "cli/engine_flags.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/parallel_for.h"

namespace met {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The multiplier of a --kv-mem suffix, or nullopt for an unknown one.
std::optional<int64_t> byte_suffix(std::string_view suffix) {
  struct Unit {
    std::string_view short_name;
    std::string_view long_name;
    int64_t bytes;
  };
  static constexpr Unit kUnits[] = {
      {"", "B", 1},
      {"K", "KiB", int64_t{1} << 10},
      {"M", "MiB", int64_t{1} << 20},
      {"G", "GiB", int64_t{1} << 30},
      {"T", "TiB", int64_t{1} << 40},
  };
  for (const Unit& u : kUnits) {
    if (equals_ignoring_case(suffix, u.short_name) || equals_ignoring_case(suffix, u.long_name)) return u.bytes;
  }
  return std::nullopt;
}

// The dtypes the KV pool can hold.
std::optional<GgmlType> parse_kv_dtype(std::string_view name) {
  std::optional<GgmlType> t = parse_ggml_type(name);
  const bool is_kv_type = t == GgmlType::kF16 || t == GgmlType::kBF16 || t == GgmlType::kF32 || t == GgmlType::kQ8_0;
  return is_kv_type ? t : std::nullopt;
}

Result<PreemptMode> preempt_mode(const EngineFlags& f) {
  if (f.preempt.empty()) return f.spill_dir.empty() ? PreemptMode::kRecompute : PreemptMode::kSwap;
  if (f.preempt == "recompute") return PreemptMode::kRecompute;
  if (f.preempt == "swap") {
    if (f.spill_dir.empty()) return invalid_argument("--preempt swap needs --spill-dir DIR to swap to");
    return PreemptMode::kSwap;
  }
  return invalid_argument("--preempt '{}' is not swap or recompute", f.preempt);
}

// Which flag sized the pool, for errors about it.
std::string pool_source(const EngineFlags& f) {
  if (f.kv_blocks.has_value()) return fmt::format("--kv-blocks {}", *f.kv_blocks);
  if (!f.kv_mem.empty()) return fmt::format("--kv-mem {}", f.kv_mem);
  return "the default KV pool (size it with --kv-mem or --kv-blocks)";
}

}  // namespace

void add_engine_flags(CLI::App& cmd, EngineFlags& flags) {
  cmd.add_option("--threads", flags.threads, "Compute threads (default: all cores)");
  cmd.add_option("--kv-dtype", flags.kv_dtype, "KV cache type: f16, bf16, f32 or q8_0")->capture_default_str();
  cmd.add_option("--device", flags.device,
                 "Where steps run: cpu; cuda (GPU 0, a MET_CUDA build); grid-host (the CUDA device's program run "
                 "on the host, slowly: for testing it without a GPU)")
      ->capture_default_str();
  cmd.add_option("--kv-mem", flags.kv_mem, "KV pool bytes, e.g. 512M or 4GiB (K, M, G are binary)");
  cmd.add_option_function<int32_t>(
      "--kv-blocks", [&flags](const int32_t& n) { flags.kv_blocks = n; },
      "KV pool size in blocks of 16 tokens (instead of --kv-mem)");
  cmd.add_option("--max-seqs", flags.max_seqs, "Sequences running at once")->capture_default_str();
  cmd.add_option("--max-batch-tokens", flags.max_batch_tokens, "Tokens (rows) per forward step")
      ->capture_default_str();
  cmd.add_option("--spill-dir", flags.spill_dir, "Directory for swapped-out KV (enables --preempt swap)");
  cmd.add_option("--preempt", flags.preempt,
                 "When the KV pool runs dry: swap (needs --spill-dir; the default with it) or recompute");
  cmd.add_option("--pipeline", flags.pipeline,
                 "on: launch decode step t+1 before step t is settled; off: one step at a time")
      ->capture_default_str();
  cmd.add_option("--state-snapshots", flags.state_snapshots,
                 "Hybrid recurrent models: recurrent-state snapshots the prefix cache keeps, counted in the KV "
                 "budget (--kv-mem or the default pool's bytes) (default: as many as --max-seqs within a quarter "
                 "of it; 0 turns prefix reuse off for these models)");
  cmd.add_option("--state-snapshot-blocks", flags.state_snapshot_blocks,
                 "Hybrid recurrent models: snapshot a prompt's state every this many KV blocks of 16 tokens (and "
                 "at its last block, and a decoding sequence's every quarter of this, for its next turn)")
      ->capture_default_str();
  cmd.add_option("--state-rollback", flags.state_rollback,
                 "Hybrid recurrent models: tokens a sequence's recurrent state can be rewound (older versions kept "
                 "per sequence); 2 or more lets a decode step launched ahead be redone, 0 keeps one version and "
                 "the host re-picks from the step's logits instead")
      ->capture_default_str();
  cmd.add_option("--state-drafts", flags.state_drafts,
                 "Hybrid recurrent models: drafts a sequence may verify per step (a verify step logs its rows' "
                 "inputs, and the next step replays the accepted ones); default: the most any draft source asks, "
                 "0: none");
  cmd.add_option("--spec-lookup", flags.spec_lookup,
                 "Speculative decoding: draft up to N tokens a step from earlier text of the prompt and output "
                 "(prompt lookup) and verify them in one step; same output (with the same seed); 0 is off")
      ->capture_default_str();
  cmd.add_option("--draft-model", flags.draft_model,
                 "Speculative decoding: a smaller GGUF model with the same vocabulary (e.g. a Q4_0 copy of this "
                 "model) drafts tokens greedily on its own KV pool; they are verified in one step; same output");
  cmd.add_option("--draft-max", flags.draft_max, "Speculative decoding: the draft model's drafts per step")
      ->capture_default_str();
  cmd.add_flag("--spec-mtp", flags.spec_mtp,
               "Speculative decoding: the model's own MTP block (nextn, e.g. Qwen3.5's) drafts tokens, verified "
               "in the next step; same output");
  cmd.add_option("--spec-mtp-drafts", flags.spec_mtp_drafts,
                 "Speculative decoding: the MTP block's drafts per step (past the first, the block is fed its own "
                 "guess; a sequence's chain grows one a step while its drafts are verified)")
      ->capture_default_str();
  cmd.add_option("--spec-adaptive", flags.spec_adaptive,
                 "Speculative decoding: on verifies only drafts worth their row, from each request's acceptance "
                 "and the measured cost of a row (backing off as the batch grows compute-bound); off verifies "
                 "every proposal")
      ->capture_default_str();
  cmd.add_option("--lora", flags.loras,
                 "A LoRA adapter (llama.cpp's GGUF form) to load at start, as NAME=PATH (repeatable); a request "
                 "runs it with model: NAME");
  cmd.add_option("--max-loras", flags.max_loras,
                 "LoRA adapters resident at once, one device slot each (default: one per --lora; 0: none)");
  cmd.add_option("--max-lora-rank", flags.max_lora_rank, "The highest rank of a LoRA adapter the server runs")
      ->capture_default_str();
  cmd.add_option("--spec-ngram-min", flags.spec_ngram_min,
                 "Speculative decoding: the shortest run of last tokens a prompt lookup matches")
      ->capture_default_str();
  cmd.add_option("--spec-ngram-max", flags.spec_ngram_max,
                 "Speculative decoding: the longest run of last tokens a prompt lookup tries first")
      ->capture_default_str();
}

void add_kv_event_flags(CLI::App& cmd, EngineFlags& flags) {
  cmd.add_option("--kv-events-endpoint", flags.kv_events_endpoint,
                 "Publish prefix-cache events in vLLM's KV event format (for Dynamo's KV router, llm-d) on this "
                 "ZeroMQ endpoint, bound as a PUB socket, e.g. tcp://*:5557 (default: off)");
  cmd.add_option("--kv-events-replay-endpoint", flags.kv_events_replay_endpoint,
                 "A ZeroMQ ROUTER endpoint to bind where routers ask for missed KV event batches, e.g. tcp://*:5558");
  cmd.add_option("--kv-events-topic", flags.kv_events_topic, "The topic frame of every KV event message (default: "
                 "empty)");
  cmd.add_option("--kv-events-buffer", flags.kv_events_buffer, "KV event batches kept for replay")
      ->capture_default_str();
}

Result<int64_t> parse_kv_mem(std::string_view text) {
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) != 0 || text[end] == '.')) ++end;
  const std::string number(text.substr(0, end));
  const std::optional<int64_t> unit = byte_suffix(text.substr(end));
  char* parsed_end = nullptr;
  const double value = number.empty() ? 0.0 : std::strtod(number.c_str(), &parsed_end);
  if (number.empty() || parsed_end != number.c_str() + number.size() || !unit.has_value()) {
    return invalid_argument("--kv-mem '{}' is not a size (bytes, or a number with K, M, G, KiB, MiB or GiB)", text);
  }
  const double bytes = std::floor(value * static_cast<double>(*unit));
  if (!(bytes >= 1.0) || bytes > static_cast<double>(kMaxKvPoolBytes)) {
    return invalid_argument("--kv-mem {} must be between 1 byte and 1 TiB", text);
  }
  return static_cast<int64_t>(bytes);
}

namespace {

// "NAME=PATH", or a PATH named by its file's stem.
Result<std::pair<std::string, std::string>> lora_entry(const std::string& flag) {
  if (flag.find('=') != std::string::npos) return parse_lora_flag(flag);
  const std::string stem = std::filesystem::path(flag).stem().string();
  if (stem.empty()) return invalid_argument("--lora '{}': expected NAME=PATH or a file", flag);
  return std::pair{stem, flag};
}

Status validate_lora_flags(const EngineFlags& f) {
  for (const std::string& l : f.loras) MET_RETURN_IF_ERROR(lora_entry(l).status());
  if (f.max_loras < -1 || f.max_loras > kMaxLorasFlag) {
    return invalid_argument("--max-loras {} must be between 0 and {}", f.max_loras, kMaxLorasFlag);
  }
  if (f.max_lora_rank < 1 || f.max_lora_rank > kMaxLoraRankFlag) {
    return invalid_argument("--max-lora-rank {} must be between 1 and {}", f.max_lora_rank, kMaxLoraRankFlag);
  }
  if (f.max_loras == 0 && !f.loras.empty()) return invalid_argument("--lora needs --max-loras of at least 1");
  return ok_status();
}

// Whether `endpoint` names a ZeroMQ transport met can bind: ipc://PATH,
// inproc://NAME, or tcp://HOST:PORT with PORT a number up to 65535 or *
// (ZeroMQ itself takes 99999 and binds some other port).
bool is_zmq_endpoint(std::string_view endpoint) {
  for (std::string_view scheme : {"ipc://", "inproc://"}) {
    if (endpoint.starts_with(scheme) && endpoint.size() > scheme.size()) return true;
  }
  if (!endpoint.starts_with("tcp://")) return false;
  const size_t colon = endpoint.rfind(':');
  if (colon <= 6) return false;  // no host before the port
  const std::string_view port = endpoint.substr(colon + 1);
  if (port == "*") return true;
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return false;
  return std::stoi(std::string(port)) <= 65535;
}

Status validate_kv_event_flags(const EngineFlags& f) {
  if (f.kv_events_endpoint.empty()) {
    if (!f.kv_events_replay_endpoint.empty()) {
      return invalid_argument("--kv-events-replay-endpoint needs --kv-events-endpoint");
    }
    return ok_status();
  }
  if (!is_zmq_endpoint(f.kv_events_endpoint)) {
    return invalid_argument("--kv-events-endpoint '{}' is not a ZeroMQ endpoint (tcp://HOST:PORT or ipc://PATH)",
                            f.kv_events_endpoint);
  }
  if (!f.kv_events_replay_endpoint.empty() && !is_zmq_endpoint(f.kv_events_replay_endpoint)) {
    return invalid_argument("--kv-events-replay-endpoint '{}' is not a ZeroMQ endpoint (tcp://HOST:PORT or "
                            "ipc://PATH)", f.kv_events_replay_endpoint);
  }
  if (f.kv_events_buffer < 1 || f.kv_events_buffer > kMaxKvEventBufferBatches) {
    return invalid_argument("--kv-events-buffer {} must be between 1 and {}", f.kv_events_buffer,
                            kMaxKvEventBufferBatches);
  }
  return ok_status();
}

}  // namespace

Status validate_engine_flags(const EngineFlags& f) {
  if (f.threads < 0) return invalid_argument("--threads {} must be at least 1 (leave it out for all cores)", f.threads);
  if (!parse_kv_dtype(f.kv_dtype)) return invalid_argument("--kv-dtype '{}' is not f16, bf16, f32 or q8_0", f.kv_dtype);
  if (f.device != "cpu" && f.device != "cuda" && f.device != "grid-host") {
    return invalid_argument("--device '{}' is not cpu, cuda or grid-host", f.device);
  }
  if (f.kv_blocks.has_value() && !f.kv_mem.empty()) {
    return invalid_argument("--kv-mem {} and --kv-blocks {} both size the KV pool; give one", f.kv_mem, *f.kv_blocks);
  }
  if (f.kv_blocks.has_value() && *f.kv_blocks < 1) {
    return invalid_argument("--kv-blocks {} must be at least 1", *f.kv_blocks);
  }
  if (!f.kv_mem.empty()) MET_RETURN_IF_ERROR(parse_kv_mem(f.kv_mem).status());
  if (f.max_seqs < 1 || f.max_seqs > kMaxSeqsFlag) {
    return invalid_argument("--max-seqs {} must be between 1 and {}", f.max_seqs, kMaxSeqsFlag);
  }
  if (f.max_batch_tokens > kMaxBatchTokensFlag) {
    return invalid_argument("--max-batch-tokens {} must be at most {}", f.max_batch_tokens, kMaxBatchTokensFlag);
  }
  if (f.max_batch_tokens < f.max_seqs) {
    return invalid_argument("--max-batch-tokens {} must be at least --max-seqs ({})", f.max_batch_tokens,
                            f.max_seqs);
  }
  if (f.pipeline != "on" && f.pipeline != "off") return invalid_argument("--pipeline '{}' is not on or off", f.pipeline);
  if (f.spec_adaptive != "on" && f.spec_adaptive != "off") {
    return invalid_argument("--spec-adaptive '{}' is not on or off", f.spec_adaptive);
  }
  if (f.state_snapshots < -1 || f.state_snapshots > kMaxSeqsFlag) {
    return invalid_argument("--state-snapshots {} must be between 0 and {}", f.state_snapshots, kMaxSeqsFlag);
  }
  if (f.state_snapshot_blocks < 1 || f.state_snapshot_blocks > 4096) {
    return invalid_argument("--state-snapshot-blocks {} must be between 1 and 4096", f.state_snapshot_blocks);
  }
  if (f.state_rollback < 0 || f.state_rollback > kMaxStateRollbackFlag) {
    return invalid_argument("--state-rollback {} must be between 0 and {}", f.state_rollback, kMaxStateRollbackFlag);
  }
  if (f.state_drafts < -1 || f.state_drafts > kMaxStateRollbackFlag) {
    return invalid_argument("--state-drafts {} must be between 0 and {}", f.state_drafts, kMaxStateRollbackFlag);
  }
  if (f.spec_lookup < 0 || f.spec_lookup > kMaxSpecLookupFlag) {
    return invalid_argument("--spec-lookup {} must be between 0 and {}", f.spec_lookup, kMaxSpecLookupFlag);
  }
  if (f.spec_mtp_drafts < 1 || f.spec_mtp_drafts > kMaxSpecMtpDraftsFlag) {
    return invalid_argument("--spec-mtp-drafts {} must be between 1 and {}", f.spec_mtp_drafts,
                            kMaxSpecMtpDraftsFlag);
  }
  if (f.draft_max < 1 || f.draft_max > kMaxSpecLookupFlag) {
    return invalid_argument("--draft-max {} must be between 1 and {}", f.draft_max, kMaxSpecLookupFlag);
  }
  if (f.spec_ngram_min < 1 || f.spec_ngram_max < f.spec_ngram_min || f.spec_ngram_max > 64) {
    return invalid_argument("--spec-ngram-min {} and --spec-ngram-max {} must satisfy 1 <= min <= max <= 64",
                            f.spec_ngram_min, f.spec_ngram_max);
  }
  MET_RETURN_IF_ERROR(validate_lora_flags(f));
  MET_RETURN_IF_ERROR(validate_kv_event_flags(f));
  return preempt_mode(f).status();
}

Result<CpuEngineConfig> engine_config(const EngineFlags& flags, StreamLimits streams) {
  MET_RETURN_IF_ERROR(validate_engine_flags(flags));
  CpuEngineConfig c;
  c.num_threads = flags.threads > 0 ? flags.threads : default_num_threads();
  c.kv_dtype = *parse_kv_dtype(flags.kv_dtype);
  c.device = flags.device;
  c.kv_blocks = flags.kv_blocks;
  if (!flags.kv_mem.empty()) {
    MET_ASSIGN_OR_RETURN(c.kv_mem_bytes, parse_kv_mem(flags.kv_mem));
  }
  c.pool_source = pool_source(flags);
  c.max_seqs = flags.max_seqs;
  c.max_batch_tokens = flags.max_batch_tokens;
  c.spill_dir = flags.spill_dir;
  MET_ASSIGN_OR_RETURN(c.preempt, preempt_mode(flags));
  c.pipeline = flags.pipeline == "on";
  c.state_snapshots = flags.state_snapshots;
  c.state_snapshot_blocks = flags.state_snapshot_blocks;
  c.state_rollback = flags.state_rollback;
  c.state_drafts = flags.state_drafts;
  c.spec_lookup = flags.spec_lookup;
  c.spec_min_ngram = flags.spec_ngram_min;
  c.spec_max_ngram = flags.spec_ngram_max;
  c.spec_adaptive = flags.spec_adaptive == "on";
  c.draft_model_path = flags.draft_model;
  c.draft_max = flags.draft_max;
  c.spec_mtp = flags.spec_mtp;
  c.spec_mtp_drafts = flags.spec_mtp_drafts;
  c.kv_events.endpoint = flags.kv_events_endpoint;
  c.kv_events.replay_endpoint = flags.kv_events_replay_endpoint;
  c.kv_events.topic = flags.kv_events_topic;
  c.kv_events.buffer_batches = flags.kv_events_buffer;
  for (const std::string& l : flags.loras) {
    MET_ASSIGN_OR_RETURN(auto entry, lora_entry(l));
    c.loras.push_back(std::move(entry));
  }
  c.max_loras =
      flags.max_loras >= 0 ? flags.max_loras : std::min(static_cast<int32_t>(flags.loras.size()), kMaxLorasFlag);
  c.max_lora_rank = flags.max_lora_rank;
  c.streams = streams;
  return c;
}

}  // namespace met
