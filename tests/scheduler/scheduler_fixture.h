// A scheduler under test: FakeDevice, FakeClock, RecordingReq, CountingTel,
// the real DevPort and KvManager (block pool, prefix cache) and optionally a real spill
// store wrapped in FaultySpillIo.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/fault_flag.h"
#include "kv/kv_manager.h"
#include "kv/spill_store.h"
#include "scheduler/dev_port.h"
#include "scheduler/scheduler.h"
#include "testing/fake_device.h"
#include "testing/faulty_spill_io.h"
#include "testing/random_data.h"
#include "testing/recording_req.h"
#include "testing/temp_dir.h"
#include "testing/test_tokenizer.h"

namespace met::testing {

struct SchedFixtureOptions {
  FakeDeviceOptions device;
  SchedulerOptions sched;
  bool with_spill = false;
  int32_t snapshot_blocks = KvManager::kDefaultSnapshotBlocks;  // hybrid prefix cache
};

class SchedFixture {
 public:
  explicit SchedFixture(SchedFixtureOptions o = {}) {
    o.device.vocab_size = static_cast<int32_t>(test_tokenizer().vocab().size());
    o.device.avoid = test_tokenizer().vocab().eog_ids();
    device = std::make_unique<FakeDevice>(o.device);
    dev_port = std::make_unique<DevPort>(*device);
    kv = std::make_unique<KvManager>(*device, o.snapshot_blocks);
    if (o.with_spill) {
      Result<std::unique_ptr<SpillStore>> s = SpillStore::create(spill_dir.path());
      EXPECT_TRUE(s.ok()) << s.status().message();
      store = std::move(*s);
      spill = std::make_unique<FaultySpillIo>(*store);
    }
    Result<std::unique_ptr<Scheduler>> s =
        Scheduler::create(SchedIo{*dev_port, *kv, req, tel, clock}, spill.get(), test_tokenizer(), o.sched);
    EXPECT_TRUE(s.ok()) << s.status().message();
    sched = std::move(*s);
  }

  // Queues a request; returns its id.
  uint64_t submit(EngineRequest r) {
    const uint64_t id = next_id++;
    sched->enqueue(std::move(r), ResponseSink(RequestId(id), nullptr), clock.now());
    return id;
  }

  // Ticks until idle (or `max_ticks`); returns the number of ticks.
  int run(int max_ticks = 100000) {
    int n = 0;
    while (!sched->idle() && n < max_ticks) {
      sched->tick();
      ++n;
    }
    return n;
  }

  // Every KV block, every recurrent-state slot and every adapter slot's
  // reference is back.
  bool pool_is_full() const {
    return kv->num_blocks_in_use() == 0 && kv->num_state_slots_in_use() == 0 &&
           kv->num_state_snapshots_pending() == 0 && kv->adapter_slots().num_in_use() == 0;
  }

  TempDir spill_dir;
  std::unique_ptr<FakeDevice> device;
  std::unique_ptr<DevPort> dev_port;
  std::unique_ptr<KvManager> kv;
  std::unique_ptr<SpillStore> store;
  std::unique_ptr<FaultySpillIo> spill;
  FakeClock clock;
  RecordingReq req;
  CountingTel tel;
  std::unique_ptr<Scheduler> sched;
  uint64_t next_id = 1;
};

// `o` with prompt lookup drafting up to max_draft tokens a step (0: off)
// from matches of the last min_ngram..max_ngram tokens, the lane on or off.
inline SchedFixtureOptions with_prompt_lookup(SchedFixtureOptions o, int32_t max_draft, int32_t min_ngram,
                                              int32_t max_ngram, bool pipeline) {
  o.sched.spec.max_draft = max_draft;
  o.sched.spec.min_ngram = min_ngram;
  o.sched.spec.max_ngram = max_ngram;
  o.sched.pipeline = pipeline;
  return o;
}

// A next token that cycles through `length` tokens from `first` (a last
// token outside the cycle starts it): prompt lookup drafts it and is right.
inline TokenId cycle_next(std::span<const TokenId> ctx, TokenId first, int32_t length) {
  const TokenId last = ctx.empty() ? 0 : ctx.back();
  return last >= first && last < first + length - 1 ? last + 1 : first;
}

inline EngineRequest greedy_request(std::vector<TokenId> prompt, int32_t max_tokens) {
  EngineRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  return r;
}

// Queues n greedy requests (prompts of 20 + 7i tokens, 40 outputs each).
inline std::vector<uint64_t> submit_many(SchedFixture& f, int n) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(f.submit(greedy_request(make_prompt(20 + 7 * i, 100 + static_cast<uint32_t>(i)), 40)));
  }
  return ids;
}

// A pool of 14 blocks for up to 8 sequences that preempts by swap: too small
// for submit_many(f, 6) at once.
inline SchedFixtureOptions tight_swap_pool() {
  SchedFixtureOptions o;
  o.device.num_kv_blocks = 14;
  o.sched.max_seqs = 8;
  o.sched.preempt = PreemptMode::kSwap;
  o.with_spill = true;
  return o;
}

// Runs the requests `ids` to the end; checks each got one finish frame and
// the pool is full; returns the tokens.
inline std::vector<std::vector<TokenId>> run_to_end(SchedFixture& f, const std::vector<uint64_t>& ids) {
  f.run();
  std::vector<std::vector<TokenId>> out;
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    EXPECT_EQ(f.req.at(id).finishes.size(), 1u) << (f.req.at(id).errors.empty() ? "" : f.req.at(id).errors[0]);
    out.push_back(f.req.at(id).tokens);
  }
  EXPECT_TRUE(f.pool_is_full());
  return out;
}

// Runs submit_many(f, n) to the end, as run_to_end.
inline std::vector<std::vector<TokenId>> run_many(SchedFixture& f, int n) { return run_to_end(f, submit_many(f, n)); }

enum class FaultPort { kDevice, kSpill };

// Counts the calls of `port` in a clean run_many(f, 6) over `o`, then reruns
// it once per call with that call failing: every request must still get
// exactly one terminal frame and the pool must be full again; `check(f, n)`
// adds what a caller also wants of the run that failed call n.
template <class Check>
void for_each_failing_call(const SchedFixtureOptions& o, FaultPort port, int64_t min_calls, Check check) {
  int64_t total_calls = 0;
  {
    SchedFixture clean(o);
    run_many(clean, 6);
    total_calls = port == FaultPort::kDevice ? clean.device->num_calls() : clean.spill->num_calls();
  }
  ASSERT_GT(total_calls, min_calls);
  for (int64_t n = 0; n < total_calls; ++n) {
    ScopedFaultReset reset;
    SchedFixture f(o);
    if (port == FaultPort::kDevice) {
      f.device->fail_call(n);
    } else {
      f.spill->fail_call(n);
    }
    const std::vector<uint64_t> ids = submit_many(f, 6);
    f.run();
    for (uint64_t id : ids) ASSERT_EQ(f.req.at(id).num_terminal(), 1) << "failing call " << n;
    EXPECT_TRUE(f.pool_is_full()) << "failing call " << n;
    check(f, n);
  }
}

}  // namespace met::testing
