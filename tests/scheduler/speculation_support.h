// What the speculation tests share: a FakeDevice next-token function whose
// outputs fall into repeating runs that prompt lookup drafts from (with a
// break every 37th position that rejects a draft), and six greedy requests
// run to the end through a SchedFixture.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <utility>
#include <vector>

#include "scheduler_fixture.h"

namespace met::spec_testing {

using testing::greedy_request;
using testing::make_prompt;
using testing::SchedFixture;
using testing::SchedFixtureOptions;

inline constexpr TokenId kEos = 2;  // the test tokenizer's EOG id is avoided unless a test returns it

// A token from the last two of the context, in a 5-token alphabet (so the
// output soon cycles, and a 2-gram seen before predicts the next token), and
// a different one at every 37th position (a draft that lookup takes from the
// cycle is rejected there). `eos_at`: EOS at that context length.
inline TokenId next_token(std::span<const TokenId> ctx, size_t eos_at) {
  const size_t n = ctx.size();
  if (n == eos_at) return kEos;
  uint32_t h = 17;
  for (size_t i = n >= 2 ? n - 2 : 0; i < n; ++i) h = h * 31 + static_cast<uint32_t>(ctx[i]);
  if (n % 37 == 0) h += 2;
  return static_cast<TokenId>(60 + h % 5);
}

inline SchedFixtureOptions with_spec(SchedFixtureOptions o, int32_t max_draft, bool pipeline) {
  return testing::with_prompt_lookup(std::move(o), max_draft, 2, 4, pipeline);
}

struct SpecRun {
  std::vector<std::vector<TokenId>> tokens;
  int num_steps = 0;
  int64_t drafted = 0;
  int64_t accepted = 0;
};

// Six greedy requests with max_tokens `max_tokens + i`, the outputs of the
// device above, run to the end; each gets one finish frame and the pool is
// full after.
inline SpecRun run_six(SchedFixtureOptions o, int32_t max_tokens, size_t eos_at = 0) {
  SchedFixture f(o);
  f.device->set_next_token([eos_at](std::span<const TokenId> ctx) { return next_token(ctx, eos_at); });
  std::vector<uint64_t> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(f.submit(greedy_request(make_prompt(20 + 7 * i, 100 + static_cast<uint32_t>(i)), max_tokens + i)));
  }
  f.run();
  SpecRun r;
  for (uint64_t id : ids) {
    EXPECT_EQ(f.req.at(id).num_terminal(), 1);
    EXPECT_EQ(f.req.at(id).finishes.size(), 1u);
    r.tokens.push_back(f.req.at(id).tokens);
  }
  EXPECT_TRUE(f.pool_is_full());
  r.num_steps = f.tel.num_steps;
  r.drafted = f.tel.num_drafted;
  r.accepted = f.tel.num_accepted;
  return r;
}

// An MTP block for a recurrent FakeDevice that guesses right: next_token of
// its context without the state's two entries (hashes, far past the
// tokens' ids), so the guesses after the argmax (a chain's) count too.
inline TokenId mtp_past_state(std::span<const TokenId> ctx) {
  std::vector<TokenId> seen;
  for (const TokenId t : ctx) {
    if (t < (1 << 16)) seen.push_back(t);
  }
  return next_token(seen, 0);
}

}  // namespace met::spec_testing
