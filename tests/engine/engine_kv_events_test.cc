// The acceptance test of KV events (issue 22): a router's view of a replica's
// prefix cache, rebuilt from nothing but the events (BlockStored adds,
// BlockRemoved erases, AllBlocksCleared empties), equals the cache itself
// after a mixed load on a real CpuEngine whose small KV pool evicts. Events
// travel over real ZeroMQ sockets: what arrives live is checked against the
// replay, which fills in what a late subscriber missed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/cpu_engine.h"
#include "kv/block_key.h"
#include "model/random_model.h"
#include "testing/kv_event_client.h"
#include "testing/msgpack_reader.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using namespace std::chrono_literals;
using testing::MsgpackValue;

struct RouterView {
  std::set<uint64_t> cached;
  int num_stored = 0;
  int num_removed = 0;
  int num_cleared = 0;
};

// Applies one batch's payload as a router would, checking each event's shape.
void apply_batch(const std::string& payload, RouterView& view) {
  const std::optional<MsgpackValue> batch = testing::read_msgpack(payload);
  ASSERT_TRUE(batch.has_value());
  ASSERT_EQ(batch->array.size(), 2u);
  for (const MsgpackValue& e : batch->array[1].array) {
    const std::string& tag = e.array.at(0).str;
    if (tag == "BlockStored") {
      ASSERT_EQ(e.array.size(), 7u);
      EXPECT_EQ(e.array[3].array.size(), 16u);
      for (const MsgpackValue& h : e.array[1].array) {
        EXPECT_TRUE(view.cached.insert(h.u64()).second) << "stored twice: " << h.u64();
      }
      if (!e.array[2].is_nil()) {
        EXPECT_TRUE(view.cached.count(e.array[2].u64())) << "a parent not cached";
      }
      ++view.num_stored;
    } else if (tag == "BlockRemoved") {
      ASSERT_EQ(e.array.size(), 3u);
      for (const MsgpackValue& h : e.array[1].array) {
        EXPECT_EQ(view.cached.erase(h.u64()), 1u) << "removed but not cached: " << h.u64();
      }
      ++view.num_removed;
    } else {
      ASSERT_EQ(tag, "AllBlocksCleared");
      view.cached.clear();
      ++view.num_cleared;
    }
  }
}

std::string kv_events_model(const testing::TempDir& dir) {
  RandomModelSpec s;
  s.num_layers = 1;
  s.vocab_size = 512;
  const std::string path = dir.file("m.gguf");
  EXPECT_TRUE(make_random_model(s, path).ok());
  return path;
}

// Prompts over a few shared prefixes with distinct tails, some repeated.
std::vector<std::vector<TokenId>> mixed_prompts() {
  std::mt19937 rng(22);
  std::uniform_int_distribution<TokenId> token(10, 500);
  std::vector<std::vector<TokenId>> prefixes(3);
  for (auto& p : prefixes) {
    for (int i = 0; i < 40; ++i) p.push_back(token(rng));
  }
  std::vector<std::vector<TokenId>> prompts;
  for (int i = 0; i < 24; ++i) {
    std::vector<TokenId> p = prefixes[static_cast<size_t>(i) % prefixes.size()];
    const int tail = 5 + (i * 7) % 40;
    for (int t = 0; t < tail; ++t) p.push_back(token(rng));
    prompts.push_back(std::move(p));
    if (i % 5 == 0) prompts.push_back(prompts.back());  // an exact repeat: a full hit
  }
  return prompts;
}

void run_load(Engine& engine) {
  const std::vector<std::vector<TokenId>> prompts = mixed_prompts();
  for (size_t wave = 0; wave < prompts.size(); wave += 4) {
    std::vector<RequestHandle> handles;
    for (size_t i = wave; i < std::min(prompts.size(), wave + 4); ++i) {
      EngineRequest r;
      r.prompt = prompts[i];
      r.max_tokens = 4 + static_cast<int32_t>(i % 13);
      r.ignore_eos = true;
      Result<RequestHandle> h = engine.submit(std::move(r));
      ASSERT_TRUE(h.ok()) << h.status().message();
      handles.push_back(std::move(*h));
    }
    for (RequestHandle& h : handles) {
      StreamEvent ev;
      while (h.next(ev)) {
      }
    }
  }
}

TEST(EngineKvEvents, ARouterRebuildsThePrefixCacheFromTheEventsAfterAMixedLoadWithEvictions) {
  testing::TempDir dir;
  CpuEngineConfig c;
  c.kv_blocks = 24;  // a few sequences' worth: later prompts evict earlier blocks
  c.max_seqs = 4;
  c.max_batch_tokens = 64;
  c.kv_events.endpoint = "ipc://" + dir.file("kv");
  c.kv_events.replay_endpoint = "ipc://" + dir.file("replay");
  c.kv_events.topic = "met";
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(kv_events_model(dir), c);
  ASSERT_TRUE(e.ok()) << e.status().message();
  testing::KvEventClient client(c.kv_events.endpoint, c.kv_events.replay_endpoint, "met");

  std::map<int64_t, std::string> live;
  run_load((*e)->engine());
  (*e)->engine().drain();
  // Whatever arrived live so far (a late subscription misses the first).
  while (std::optional<testing::KvEventMessage> m = client.next(200ms)) {
    EXPECT_EQ(m->topic, "met");
    live.emplace(m->seq, m->payload);
  }

  const std::optional<std::vector<testing::KvEventMessage>> replay = client.replay(0, 10s);
  ASSERT_TRUE(replay.has_value());
  ASSERT_GE(replay->size(), 2u);
  ASSERT_EQ(replay->back().seq, kKvEventReplayEnd);
  RouterView view;
  for (size_t i = 0; i + 1 < replay->size(); ++i) {
    const testing::KvEventMessage& m = (*replay)[i];
    ASSERT_EQ(m.seq, static_cast<int64_t>(i)) << "sequence numbers run from 0 without gaps";
    if (auto it = live.find(m.seq); it != live.end()) {
      EXPECT_EQ(it->second, m.payload);
    }
    apply_batch(m.payload, view);
  }
  EXPECT_EQ(view.num_cleared, 1);  // the engine's first batch
  EXPECT_GT(view.num_removed, 0) << "the load must evict to test removal";

  std::vector<BlockKey> keys;
  (*e)->engine().prefix_cache().append_cached_keys(keys);
  std::set<uint64_t> cached;
  for (const BlockKey& k : keys) cached.insert(external_block_hash(k));
  EXPECT_FALSE(cached.empty());
  EXPECT_EQ(view.cached, cached);
}

TEST(EngineKvEvents, ABadEndpointStopsTheEngineFromOpeningWithOneLine) {
  testing::TempDir dir;
  CpuEngineConfig c;
  c.kv_blocks = 8;
  c.kv_events.endpoint = "tcp://*:not-a-port";
  Result<std::unique_ptr<CpuEngine>> e = CpuEngine::open(kv_events_model(dir), c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("--kv-events-endpoint 'tcp://*:not-a-port'"), std::string::npos)
      << e.status().message();
}

}  // namespace
}  // namespace met
