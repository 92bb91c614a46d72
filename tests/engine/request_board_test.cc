// RequestBoard: a request's record from its lifecycle events, the live
// progress merged in by view(), the recent ended requests, per-tenant totals
// and their bound.
#include "engine/request_board.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace met {
namespace {

RequestEvent event(RequestEventKind kind, uint64_t id, std::string_view tenant) {
  RequestEvent e;
  e.kind = kind;
  e.id = RequestId(id);
  e.tenant = tenant;
  e.prompt_tokens = 40;
  return e;
}

TEST(RequestBoard, ARequestsEventsMakeItsStateTimesAndTimeline) {
  RequestBoard board;
  board.on_event(event(RequestEventKind::kQueued, 7, "acme"), 1000);
  RequestEvent admitted = event(RequestEventKind::kAdmitted, 7, "acme");
  admitted.cached_tokens = 32;
  board.on_event(admitted, 1010);
  board.on_event(event(RequestEventKind::kFirstToken, 7, "acme"), 1050);
  board.on_event(event(RequestEventKind::kSwapped, 7, "acme"), 1100);
  board.on_event(event(RequestEventKind::kResumed, 7, "acme"), 1200);
  const std::vector<SeqProgress> live = {{RequestId(7), SeqPhase::kRunning, 12, 4}};
  const EngineView v = board.view(live, 1300);
  ASSERT_EQ(v.requests.size(), 1u);
  const RequestView& r = v.requests[0];
  EXPECT_EQ(r.state, RequestState::kRunning);
  EXPECT_EQ(r.queued_ms, 1000);
  EXPECT_EQ(r.admitted_ms, 1010);
  EXPECT_EQ(r.first_token_ms, 1050);
  EXPECT_EQ(r.cached_tokens, 32);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(r.output_tokens, 12);
  EXPECT_EQ(r.kv_blocks, 4);
  std::vector<std::string_view> names;
  for (const TimelineEntry& t : r.timeline) names.push_back(t.event);
  EXPECT_EQ(names, (std::vector<std::string_view>{"queued", "admitted", "first_token", "swapped", "resumed"}));
  EXPECT_EQ(r.timeline[1].cached_tokens, 32);
}

TEST(RequestBoard, EndedRequestsLeaveTheFlightAndOnlyTheLastOnesAreKept) {
  RequestBoard board(/*num_recent=*/2);
  for (uint64_t id = 1; id <= 3; ++id) {
    board.on_event(event(RequestEventKind::kQueued, id, ""), 10);
    RequestEvent done = event(RequestEventKind::kFinished, id, "");
    done.finish_reason = "stop";
    done.output_tokens = 5;
    board.on_event(done, 20);
  }
  EXPECT_EQ(board.num_in_flight(), 0u);
  const EngineView v = board.view({}, 30);
  ASSERT_EQ(v.requests.size(), 2u);
  EXPECT_EQ(v.requests[0].id.value(), 2u);
  EXPECT_EQ(v.requests[1].id.value(), 3u);
  EXPECT_EQ(v.requests[1].state, RequestState::kFinished);
  EXPECT_EQ(v.requests[1].finish_reason, "stop");
  EXPECT_EQ(v.requests[1].finished_ms, 20);
}

TEST(RequestBoard, TenantsTotalTheirRequestsTokensCacheAndLiveBlocks) {
  RequestBoard board;
  board.on_event(event(RequestEventKind::kQueued, 1, "a"), 0);
  board.on_event(event(RequestEventKind::kQueued, 2, "a"), 0);
  board.on_event(event(RequestEventKind::kQueued, 3, "b"), 0);
  RequestEvent admitted = event(RequestEventKind::kAdmitted, 1, "a");
  admitted.cached_tokens = 16;
  board.on_event(admitted, 1);
  RequestEvent done = event(RequestEventKind::kFinished, 1, "a");
  done.output_tokens = 9;
  board.on_event(done, 2);
  const std::vector<SeqProgress> live = {{RequestId(2), SeqPhase::kPrefill, 0, 3},
                                         {RequestId(3), SeqPhase::kWaiting, 0, 0}};
  const EngineView v = board.view(live, 3);
  ASSERT_EQ(v.tenants.size(), 2u);
  const TenantView& a = v.tenants[0];
  EXPECT_EQ(a.tenant, "a");
  EXPECT_EQ(a.requests, 2);
  EXPECT_EQ(a.running, 1);
  EXPECT_EQ(a.prompt_tokens, 40);
  EXPECT_EQ(a.output_tokens, 9);
  EXPECT_EQ(a.cache_query_tokens, 40);
  EXPECT_EQ(a.cache_hit_tokens, 16);
  EXPECT_EQ(a.kv_blocks, 3);
  EXPECT_EQ(v.tenants[1].tenant, "b");
  EXPECT_EQ(v.tenants[1].running, 1);
}

TEST(RequestBoard, TenantsPastTheBoundAreCountedAsOther) {
  RequestBoard board(RequestBoard::kDefaultRecent, /*max_tenants=*/2);
  board.on_event(event(RequestEventKind::kQueued, 1, "a"), 0);
  board.on_event(event(RequestEventKind::kQueued, 2, "b"), 0);
  board.on_event(event(RequestEventKind::kQueued, 3, "c"), 0);
  board.on_event(event(RequestEventKind::kQueued, 4, "d"), 0);
  const std::vector<SeqProgress> live = {{RequestId(4), SeqPhase::kWaiting, 0, 2}};
  const EngineView v = board.view(live, 1);
  ASSERT_EQ(v.tenants.size(), 3u);
  EXPECT_EQ(v.tenants[0].tenant, kOtherTenant);
  EXPECT_EQ(v.tenants[0].requests, 2);
  EXPECT_EQ(v.tenants[0].kv_blocks, 2);
  EXPECT_EQ(v.requests[0].tenant, "d") << "the request keeps its own tenant";
}

}  // namespace
}  // namespace met
