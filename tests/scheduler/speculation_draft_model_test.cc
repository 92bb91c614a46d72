// Tests for speculation from a draft model (spec/draft_model.h) through the
// scheduler: the target is a FakeDevice whose next token is a hash of its
// whole KV context (prompt lookup finds nothing to draft), the draft model
// another FakeDevice that computes the same hash (every draft right) or a
// variant wrong at every fourth position. Greedy and seeded sampled output
// with drafts is the output without, pipelined or not, in a roomy pool and
// in one that swaps or recomputes; a failure at any call of either device
// answers every request once and leaves both pools full, and a failed draft
// model leaves the output alone; a request's draft cap and speculative:false
// reach the draft model; a draft model of another vocabulary is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "core/fault_flag.h"
#include "scheduler/speculation.h"
#include "scheduler_fixture.h"
#include "spec/draft_model.h"

namespace met {
namespace speculation_draft_model_test {
namespace {

using testing::FakeDevice;
using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

enum class Drafter { kNone, kExact, kWrongEveryFourth };

// A draft model over its own FakeDevice, with the target fixture's vocabulary.
struct DraftSide {
  explicit DraftSide(Drafter kind, int32_t num_blocks = 128, std::function<int64_t(int32_t)> step_ns = {}) {
    testing::FakeDeviceOptions o;
    o.step_ns = std::move(step_ns);
    o.vocab_size = static_cast<int32_t>(testing::test_tokenizer().vocab().size());
    o.avoid = testing::test_tokenizer().vocab().eog_ids();
    o.num_kv_blocks = num_blocks;
    device = std::make_unique<FakeDevice>(o);
    if (kind == Drafter::kWrongEveryFourth) {
      device->set_next_token([d = device.get(), vocab = o.vocab_size](std::span<const TokenId> ctx) {
        const TokenId t = d->default_next(ctx);
        return ctx.size() % 4 == 0 ? static_cast<TokenId>((t + 1) % vocab) : t;
      });
    }
    model = std::make_unique<DraftModel>(*device);
  }
  std::unique_ptr<FakeDevice> device;
  std::unique_ptr<DraftModel> model;
};

SchedFixtureOptions with_drafter(SchedFixtureOptions o, DraftSide* side, int32_t model_draft, bool pipeline) {
  o.sched.spec.draft_model = side != nullptr ? side->model.get() : nullptr;
  o.sched.spec.model_draft = model_draft;
  o.sched.pipeline = pipeline;
  return o;
}

struct DraftRun {
  std::vector<std::vector<TokenId>> tokens;
  int num_steps = 0;
  int64_t drafted = 0;
  int64_t accepted = 0;
};

// Runs `requests` to the end; each gets one finish frame, and the target's
// and the draft model's pools are full after.
DraftRun run_requests(Drafter kind, SchedFixtureOptions o, std::vector<EngineRequest> requests, bool pipeline,
                      int32_t model_draft = 4) {
  std::unique_ptr<DraftSide> side = kind == Drafter::kNone ? nullptr : std::make_unique<DraftSide>(kind);
  SchedFixture f(with_drafter(std::move(o), side.get(), model_draft, pipeline));
  std::vector<uint64_t> ids;
  for (EngineRequest& r : requests) ids.push_back(f.submit(std::move(r)));
  f.run();
  DraftRun run;
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    EXPECT_EQ(f.req.at(id).finishes.size(), 1u);
    run.tokens.push_back(f.req.at(id).tokens);
  }
  EXPECT_TRUE(f.pool_is_full());
  if (side != nullptr) {
    EXPECT_EQ(side->model->num_free_blocks(), side->device->info().num_kv_blocks);
    EXPECT_EQ(side->model->num_tracked(), 0);
  }
  run.num_steps = f.tel.num_steps;
  run.drafted = f.tel.num_drafted;
  run.accepted = f.tel.num_accepted;
  return run;
}

std::vector<EngineRequest> greedy_six(int32_t max_tokens) {
  std::vector<EngineRequest> out;
  for (int i = 0; i < 6; ++i) {
    out.push_back(greedy_request(make_prompt(20 + 7 * i, 100 + static_cast<uint32_t>(i)), max_tokens + i));
  }
  return out;
}

TEST(SpeculationDraftModel, GreedyOutputIsTheOutputWithoutItPipelinedOrNot) {
  const DraftRun off = run_requests(Drafter::kNone, {}, greedy_six(60), false);
  EXPECT_EQ(off.drafted, 0);
  for (bool pipeline : {false, true}) {
    const DraftRun exact = run_requests(Drafter::kExact, {}, greedy_six(60), pipeline);
    EXPECT_EQ(exact.tokens, off.tokens) << "pipeline " << pipeline;
    EXPECT_GT(exact.drafted, 100);
    EXPECT_EQ(exact.accepted, exact.drafted) << "the draft model computes the target's next token";
    EXPECT_LT(exact.num_steps, off.num_steps / 3) << "4 drafts a step, all accepted";
    const DraftRun wrong = run_requests(Drafter::kWrongEveryFourth, {}, greedy_six(60), pipeline);
    EXPECT_EQ(wrong.tokens, off.tokens) << "pipeline " << pipeline;
    EXPECT_GT(wrong.accepted, 0);
    EXPECT_LT(wrong.accepted, wrong.drafted);
    EXPECT_LT(wrong.num_steps, off.num_steps);
  }
}

TEST(SpeculationDraftModel, SeededSampledOutputIsTheOutputWithoutIt) {
  auto requests = [] {
    std::vector<EngineRequest> out;
    for (int i = 0; i < 6; ++i) {
      EngineRequest r = greedy_request(make_prompt(24, 30 + static_cast<uint32_t>(i)), 50);
      r.sampling.temperature = i % 2 == 0 ? 1.0f : 3.0f;  // 3.0 leaves the hashed token often
      r.sampling.seed = 100 + static_cast<uint64_t>(i);
      if (i % 3 == 2) r.sampling.repetition_penalty = 1.3f;
      out.push_back(std::move(r));
    }
    return out;
  };
  const DraftRun off = run_requests(Drafter::kNone, {}, requests(), false);
  for (bool pipeline : {false, true}) {
    const DraftRun on = run_requests(Drafter::kExact, {}, requests(), pipeline);
    EXPECT_EQ(on.tokens, off.tokens) << "pipeline " << pipeline;
    EXPECT_GT(on.accepted, 0);
    EXPECT_LT(on.accepted, on.drafted) << "sampling away from the draft rejects it";
  }
}

TEST(SpeculationDraftModel, ATightPoolThatSwapsOrRecomputesGivesTheRoomyOutput) {
  const DraftRun roomy = run_requests(Drafter::kNone, {}, greedy_six(60), false);
  for (PreemptMode mode : {PreemptMode::kSwap, PreemptMode::kRecompute}) {
    SchedFixtureOptions o = testing::tight_swap_pool();
    o.sched.preempt = mode;
    o.with_spill = mode == PreemptMode::kSwap;
    for (bool pipeline : {false, true}) {
      const DraftRun tight = run_requests(Drafter::kWrongEveryFourth, o, greedy_six(60), pipeline);
      EXPECT_EQ(tight.tokens, roomy.tokens) << "mode " << static_cast<int>(mode) << " pipeline " << pipeline;
      EXPECT_GT(tight.accepted, 0);
    }
  }
}

// Adaptive speculation prices a draft model's drafts at what each costs
// from then on. A sequence's first proposal also catches the draft model up
// on its whole prompt (here 480 tokens: 30 draft steps' worth), a cost paid
// once; priced into later drafts it would make them look dearer than the
// rows they save and withhold them. Memory-bound devices (a step's time
// barely grows with its rows), a draft model a quarter of the target's
// step, every draft right: after the catch-up nearly every step verifies
// the cap.
TEST(SpeculationDraftModel, APromptsCatchUpDoesNotPriceTheDraftsAfterIt) {
  DraftSide side(Drafter::kExact, 128, [](int32_t rows) { return int64_t{8'000'000} + int64_t{500'000} * rows; });
  SchedFixtureOptions o;
  o.device.step_ns = [](int32_t rows) { return int64_t{32'000'000} + int64_t{1'000'000} * rows; };
  SchedFixture f(with_drafter(std::move(o), &side, 4, false));
  const uint64_t id = f.submit(greedy_request(make_prompt(480, 9), 200));
  f.run();
  ASSERT_EQ(f.req.at(id).tokens.size(), 200u);
  EXPECT_EQ(f.tel.num_accepted, f.tel.num_drafted);
  // 200 tokens in at most 60 verify steps: at least 140 drafts accepted.
  EXPECT_GE(f.tel.num_accepted, 140) << f.tel.num_steps << " steps";
}

// A request's acceptance starts from what the engine's recent requests
// saw from the draft model, not from an even chance: a draft model whose
// draft costs more than half a target step (a Q4_0 twin of an F16 target
// on two cores) would never be tried for a new request at 1/2, however
// good it has been. Every draft right; the second request, after the
// first, drafts as the first did.
TEST(SpeculationDraftModel, ANewRequestStartsFromTheDraftModelsRecentAcceptance) {
  DraftSide side(Drafter::kExact, 128, [](int32_t rows) { return int64_t{18'000'000} + int64_t{500'000} * rows; });
  SchedFixtureOptions o;
  o.device.step_ns = [](int32_t rows) { return int64_t{32'000'000} + int64_t{1'000'000} * rows; };
  SchedFixture f(with_drafter(std::move(o), &side, 4, false));
  std::vector<int64_t> drafted;
  for (uint32_t i = 0; i < 3; ++i) {
    const int64_t before = f.tel.num_drafted;
    const uint64_t id = f.submit(greedy_request(make_prompt(40, 50 + i), 100));
    f.run();
    ASSERT_EQ(f.req.at(id).tokens.size(), 100u);
    drafted.push_back(f.tel.num_drafted - before);
  }
  EXPECT_EQ(f.tel.num_accepted, f.tel.num_drafted);
  EXPECT_GE(drafted[0], 60) << "the first request tries the draft model and keeps it";
  EXPECT_GE(drafted[1], 60) << "the second starts from the first's acceptance";
  EXPECT_GE(drafted[2], 60);
}

// One request at a time: its draft cap bounds the outputs of its verify
// steps, and speculative:false (a cap of 0) never asks the draft model.
TEST(SpeculationDraftModel, ARequestsCapAndSpeculativeFalseReachTheDraftModel) {
  for (int32_t cap : {0, 2}) {
    DraftSide side(Drafter::kExact);
    SchedFixture f(with_drafter({}, &side, 6, false));
    f.device->keep_plans(true);
    EngineRequest r = greedy_request(make_prompt(20, 3), 40);
    r.max_draft_tokens = cap;
    const uint64_t id = f.submit(std::move(r));
    f.run();
    EXPECT_EQ(f.req.at(id).tokens.size(), 40u);
    size_t most_outputs = 0;
    for (const StepPlan& p : f.device->plans()) most_outputs = std::max(most_outputs, p.outputs.size());
    EXPECT_EQ(most_outputs, static_cast<size_t>(cap) + 1) << "cap " << cap;
    EXPECT_EQ(f.tel.num_accepted, f.tel.num_drafted);
    if (cap == 0) {
      EXPECT_EQ(side.device->num_steps(), 0);
      EXPECT_EQ(f.tel.num_drafted, 0);
    } else {
      EXPECT_EQ(f.tel.num_drafted % cap, 0) << "every verify step drafts the cap";
      EXPECT_GT(f.tel.num_drafted, 20);
    }
  }
}

TEST(SpeculationDraftModel, AFailureAtAnyCallOfEitherDeviceAnswersEveryRequestOnce) {
  const DraftRun off = run_requests(Drafter::kNone, {}, greedy_six(30), false);
  for (bool fail_draft : {false, true}) {
    int64_t calls = 0;
    {
      DraftSide side(Drafter::kWrongEveryFourth);
      SchedFixture clean(with_drafter({}, &side, 4, true));
      for (EngineRequest& r : greedy_six(30)) clean.submit(std::move(r));
      clean.run();
      ASSERT_GT(clean.tel.num_accepted, 0);
      calls = fail_draft ? side.device->num_calls() : clean.device->num_calls();
    }
    for (int64_t n = 0; n < calls; ++n) {
      ScopedFaultReset reset;
      DraftSide side(Drafter::kWrongEveryFourth);
      SchedFixture f(with_drafter({}, &side, 4, true));
      (fail_draft ? *side.device : *f.device).fail_call(n);
      std::vector<uint64_t> ids;
      for (EngineRequest& r : greedy_six(30)) ids.push_back(f.submit(std::move(r)));
      f.run();
      for (size_t i = 0; i < ids.size(); ++i) {
        ASSERT_EQ(f.req.at(ids[i]).num_terminal(), 1) << "failing call " << n;
        // A failed draft model only costs speed: every request finishes as without it.
        if (fail_draft) {
          EXPECT_EQ(f.req.at(ids[i]).tokens, off.tokens[i]) << "failing draft call " << n;
        }
      }
      EXPECT_TRUE(f.pool_is_full()) << "failing call " << n;
      EXPECT_EQ(side.model->num_free_blocks(), side.device->info().num_kv_blocks) << "failing call " << n;
      if (fail_draft) {
        EXPECT_TRUE(side.model->failed()) << "failing draft call " << n;
      }
    }
  }
}

TEST(SpeculationDraftModel, ADraftModelOfAnotherVocabularyIsRefused) {
  testing::FakeDeviceOptions o;
  testing::FakeDevice target({});
  o.vocab_size = target.info().vocab_size + 1;
  FakeDevice draft_device(o);
  DraftModel model(draft_device);
  DevPort dev(target);
  KvManager kv(target);
  testing::RecordingReq req;
  testing::CountingTel tel;
  FakeClock clock;
  SchedulerOptions so;
  so.spec.draft_model = &model;
  Result<std::unique_ptr<Scheduler>> s =
      Scheduler::create(SchedIo{dev, kv, req, tel, clock}, nullptr, testing::test_tokenizer(), so);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("draft model's vocabulary"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace speculation_draft_model_test
}  // namespace met
