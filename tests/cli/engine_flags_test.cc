// Tests for the engine flags' pure parts: --kv-mem sizes, the checks, the
// config they make.
// (The flags through a command are tested by run_command_test.cc.)
#include "cli/engine_flags.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

namespace met {
namespace {

TEST(ParseKvMem, AcceptsBytesAndBinarySuffixes) {
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {"4096", 4096},
      {"64K", 64 << 10},
      {"64k", 64 << 10},
      {"64KiB", 64 << 10},
      {"512M", int64_t{512} << 20},
      {"512MiB", int64_t{512} << 20},
      {"2G", int64_t{2} << 30},
      {"2GiB", int64_t{2} << 30},
      {"1.5G", int64_t{3} << 29},
      {"100B", 100},
  };
  for (const auto& [text, bytes] : cases) {
    Result<int64_t> r = parse_kv_mem(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.status().message();
    EXPECT_EQ(*r, bytes) << text;
  }
}

TEST(ParseKvMem, RefusesWhatIsNotASizeNamingTheFlagAndText) {
  for (const std::string text : {"", "G", "12Q", "1..5G", "-1G", "1 G", "0", "0.1", "2TiB", "1e9"}) {
    Result<int64_t> r = parse_kv_mem(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("--kv-mem"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(text), std::string::npos) << r.status().message();
  }
}

TEST(EngineConfig, CarriesTheFlagsAndNamesWhatSizedThePool) {
  EngineFlags f;
  f.threads = 3;
  f.kv_dtype = "q8_0";
  f.kv_mem = "64M";
  f.spill_dir = "/tmp/x";
  f.pipeline = "off";
  Result<CpuEngineConfig> c = engine_config(f);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->num_threads, 3);
  EXPECT_EQ(c->kv_dtype, GgmlType::kQ8_0);
  EXPECT_EQ(c->kv_mem_bytes, int64_t{64} << 20);
  EXPECT_FALSE(c->kv_blocks.has_value());
  EXPECT_EQ(c->pool_source, "--kv-mem 64M");
  EXPECT_EQ(c->preempt, PreemptMode::kSwap);  // a spill dir alone means swap
  EXPECT_FALSE(c->pipeline);
  f.kv_mem.clear();
  f.kv_blocks = 9;
  EXPECT_EQ(engine_config(f)->pool_source, "--kv-blocks 9");
  f.max_seqs = 0;
  EXPECT_FALSE(engine_config(f).ok());
}

TEST(ValidateEngineFlags, RefusesConflictsNamingBothFlags) {
  EngineFlags both;
  both.kv_mem = "1G";
  both.kv_blocks = 10;
  EXPECT_NE(validate_engine_flags(both).message().find("--kv-mem 1G and --kv-blocks 10"), std::string::npos);

  EngineFlags swap;
  swap.preempt = "swap";
  EXPECT_NE(validate_engine_flags(swap).message().find("--spill-dir"), std::string::npos);
  swap.spill_dir = "/tmp/x";
  EXPECT_TRUE(validate_engine_flags(swap).ok());

  EXPECT_TRUE(validate_engine_flags(EngineFlags{}).ok());
}

TEST(ValidateEngineFlags, PipelineIsOnOrOff) {
  EngineFlags f;
  f.pipeline = "off";
  EXPECT_TRUE(validate_engine_flags(f).ok());
  f.pipeline = "maybe";
  EXPECT_NE(validate_engine_flags(f).message().find("--pipeline 'maybe'"), std::string::npos);
}

TEST(ValidateEngineFlags, StateSnapshotFlagsAreInRangeAndReachTheConfig) {
  EngineFlags f;
  f.state_snapshots = 0;
  f.state_snapshot_blocks = 4;
  Result<CpuEngineConfig> c = engine_config(f);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->state_snapshots, 0);
  EXPECT_EQ(c->state_snapshot_blocks, 4);
  f.state_snapshots = -2;
  EXPECT_NE(validate_engine_flags(f).message().find("--state-snapshots -2"), std::string::npos);
  f.state_snapshots = -1;
  f.state_snapshot_blocks = 0;
  EXPECT_NE(validate_engine_flags(f).message().find("--state-snapshot-blocks 0"), std::string::npos);
}

TEST(ValidateEngineFlags, StateRollbackIsOffByDefaultReachesTheConfigAndIsInRange) {
  EngineFlags f;
  EXPECT_EQ(engine_config(f)->state_rollback, 0);
  f.state_rollback = kLaneStateRollback;
  EXPECT_EQ(engine_config(f)->state_rollback, kLaneStateRollback);
  f.state_rollback = -1;
  EXPECT_NE(validate_engine_flags(f).message().find("--state-rollback -1"), std::string::npos);
  f.state_rollback = kMaxStateRollbackFlag + 1;
  EXPECT_FALSE(validate_engine_flags(f).ok());
}

TEST(ValidateEngineFlags, StateDraftsFollowTheDraftSourcesByDefaultReachTheConfigAndAreInRange) {
  EngineFlags f;
  EXPECT_EQ(engine_config(f)->state_drafts, -1);
  f.state_drafts = 0;
  EXPECT_EQ(engine_config(f)->state_drafts, 0);
  f.state_drafts = -2;
  EXPECT_NE(validate_engine_flags(f).message().find("--state-drafts -2"), std::string::npos);
  f.state_drafts = kMaxStateRollbackFlag + 1;
  EXPECT_FALSE(validate_engine_flags(f).ok());
}

TEST(ValidateEngineFlags, SpecMtpIsOffByDefaultAndReachesTheConfig) {
  EngineFlags f;
  EXPECT_FALSE(engine_config(f)->spec_mtp);
  f.spec_mtp = true;
  EXPECT_TRUE(engine_config(f)->spec_mtp);
}

TEST(ValidateEngineFlags, SpecLookupIsOffByDefaultReachesTheConfigAndIsInRange) {
  EngineFlags f;
  EXPECT_EQ(engine_config(f)->spec_lookup, 0);
  f.spec_lookup = 4;
  f.spec_ngram_min = 3;
  f.spec_ngram_max = 6;
  const Result<CpuEngineConfig> c = engine_config(f);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->spec_lookup, 4);
  EXPECT_EQ(c->spec_min_ngram, 3);
  EXPECT_EQ(c->spec_max_ngram, 6);
  f.spec_lookup = kMaxSpecLookupFlag + 1;
  EXPECT_NE(validate_engine_flags(f).message().find("--spec-lookup 33"), std::string::npos);
  f.spec_lookup = 4;
  f.spec_ngram_min = 7;
  EXPECT_NE(validate_engine_flags(f).message().find("--spec-ngram-min 7 and --spec-ngram-max 6"), std::string::npos);
  f.spec_ngram_min = 0;
  EXPECT_FALSE(validate_engine_flags(f).ok());
}

TEST(ValidateEngineFlags, SpecAdaptiveIsOnByDefaultAndOnlyOnOrOff) {
  EngineFlags f;
  EXPECT_TRUE(engine_config(f)->spec_adaptive);
  f.spec_adaptive = "off";
  EXPECT_FALSE(engine_config(f)->spec_adaptive);
  f.spec_adaptive = "maybe";
  EXPECT_NE(validate_engine_flags(f).message().find("--spec-adaptive 'maybe'"), std::string::npos);
}

TEST(ValidateEngineFlags, DraftModelIsOffByDefaultReachesTheConfigAndItsDraftsAreInRange) {
  EngineFlags f;
  EXPECT_TRUE(engine_config(f)->draft_model_path.empty());
  f.draft_model = "small.gguf";
  f.draft_max = 6;
  const Result<CpuEngineConfig> c = engine_config(f);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->draft_model_path, "small.gguf");
  EXPECT_EQ(c->draft_max, 6);
  for (int32_t bad : {0, kMaxSpecLookupFlag + 1}) {
    f.draft_max = bad;
    EXPECT_NE(validate_engine_flags(f).message().find(fmt::format("--draft-max {}", bad)), std::string::npos);
  }
}

TEST(ValidateEngineFlags, MtpDraftsReachTheConfigAndAreInRange) {
  EngineFlags f;
  EXPECT_EQ(engine_config(f)->spec_mtp_drafts, 3);
  f.spec_mtp_drafts = 5;
  EXPECT_EQ(engine_config(f)->spec_mtp_drafts, 5);
  for (int32_t bad : {0, kMaxSpecMtpDraftsFlag + 1}) {
    f.spec_mtp_drafts = bad;
    EXPECT_NE(validate_engine_flags(f).message().find(fmt::format("--spec-mtp-drafts {}", bad)), std::string::npos);
  }
}

}  // namespace
}  // namespace met

namespace met {
namespace {

TEST(EngineConfig, LoraFlagsGiveTheAdaptersAndOneSlotEach) {
  EngineFlags f;
  f.loras = {"sql=/m/sql.gguf", "/m/chat-v2.gguf"};
  Result<CpuEngineConfig> c = engine_config(f);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_EQ(c->loras.size(), 2u);
  EXPECT_EQ(c->loras[0], (std::pair<std::string, std::string>{"sql", "/m/sql.gguf"}));
  EXPECT_EQ(c->loras[1].first, "chat-v2");  // named by its file's stem
  EXPECT_EQ(c->max_loras, 2);
  f.max_loras = 8;
  EXPECT_EQ(engine_config(f)->max_loras, 8);
  EXPECT_EQ(engine_config(EngineFlags{})->max_loras, 0) << "adapters on without being asked for";
}

TEST(ValidateEngineFlags, RefusesBadLoraFlagsNamingThem) {
  EngineFlags f;
  f.loras = {"sql="};
  EXPECT_NE(validate_engine_flags(f).message().find("--lora 'sql=': expected NAME=PATH"), std::string::npos);
  f.loras = {"a=x.gguf"};
  f.max_loras = 0;
  EXPECT_NE(validate_engine_flags(f).message().find("--lora needs --max-loras of at least 1"), std::string::npos);
  f.max_loras = 65;
  EXPECT_NE(validate_engine_flags(f).message().find("--max-loras 65 must be between 0 and 64"), std::string::npos);
  f.max_loras = 1;
  f.max_lora_rank = 0;
  EXPECT_NE(validate_engine_flags(f).message().find("--max-lora-rank 0 must be between 1 and 512"),
            std::string::npos);
}

}  // namespace
TEST(ValidateEngineFlags, KvEventsAreOffByDefaultAndTheirFlagsReachTheConfig) {
  EngineFlags f;
  EXPECT_TRUE(engine_config(f)->kv_events.endpoint.empty());
  f.kv_events_endpoint = "tcp://*:5557";
  f.kv_events_replay_endpoint = "ipc:///tmp/met-replay";
  f.kv_events_topic = "kv";
  f.kv_events_buffer = 7;
  const Result<CpuEngineConfig> c = engine_config(f);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->kv_events.endpoint, "tcp://*:5557");
  EXPECT_EQ(c->kv_events.replay_endpoint, "ipc:///tmp/met-replay");
  EXPECT_EQ(c->kv_events.topic, "kv");
  EXPECT_EQ(c->kv_events.buffer_batches, 7);
}

TEST(ValidateEngineFlags, KvEventFlagsAreRefusedNamingTheFlagAndValue) {
  EngineFlags f;
  f.kv_events_endpoint = "localhost:5557";
  EXPECT_NE(validate_engine_flags(f).message().find("--kv-events-endpoint 'localhost:5557' is not a ZeroMQ endpoint"),
            std::string::npos);
  f.kv_events_endpoint = "tcp://*:99999";
  EXPECT_NE(validate_engine_flags(f).message().find("--kv-events-endpoint 'tcp://*:99999'"), std::string::npos);
  f.kv_events_endpoint = "tcp://*:*";
  EXPECT_TRUE(validate_engine_flags(f).ok());
  f.kv_events_endpoint = "tcp://*:5557";
  f.kv_events_buffer = 0;
  EXPECT_NE(validate_engine_flags(f).message().find("--kv-events-buffer 0"), std::string::npos);
  f = EngineFlags{};
  f.kv_events_replay_endpoint = "tcp://*:5558";
  EXPECT_NE(validate_engine_flags(f).message().find("needs --kv-events-endpoint"), std::string::npos);
}

}  // namespace met
