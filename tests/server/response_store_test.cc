// Tests for ResponseStore: bounded by count and bytes, oldest dropped first,
// safe from many threads.
#include "server/response_store.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

StoredResponse stored_entry(const std::string& text) {
  return StoredResponse{Json{{"output_text", text}}, Json::array({Json{{"role", "user"}, {"content", text}}})};
}

TEST(ResponseStore, GivesBackWhatWasPutAndNothingForAnUnknownId) {
  ResponseStore store;
  store.put("resp_1", stored_entry("hello"));
  const std::optional<StoredResponse> got = store.get("resp_1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->response["output_text"], "hello");
  EXPECT_EQ(got->conversation[0]["content"], "hello");
  EXPECT_FALSE(store.get("resp_2").has_value());
}

TEST(ResponseStore, FindsAKeptResponsesOutputItemById) {
  ResponseStore store;
  StoredResponse r = stored_entry("x");
  r.response["output"] = Json::array({Json{{"id", "rs_1"}, {"type", "reasoning"}}, Json{{"id", "msg_1"}}});
  store.put("resp_1", std::move(r));
  EXPECT_EQ(store.find_item("rs_1"), (Json{{"id", "rs_1"}, {"type", "reasoning"}}));
  EXPECT_FALSE(store.find_item("msg_2").has_value());
}

TEST(ResponseStore, KeepsOnlyTheNewestEntriesWithinItsCount) {
  ResponseStore store(/*max_entries=*/3);
  for (int i = 0; i < 5; ++i) store.put("resp_" + std::to_string(i), stored_entry(std::to_string(i)));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_FALSE(store.get("resp_0").has_value());
  EXPECT_FALSE(store.get("resp_1").has_value());
  EXPECT_TRUE(store.get("resp_4").has_value());
}

TEST(ResponseStore, DropsTheOldestEntriesToStayWithinItsBytes) {
  const std::string big(1000, 'x');
  ResponseStore store(/*max_entries=*/100, /*max_bytes=*/5000);
  for (int i = 0; i < 10; ++i) store.put("resp_" + std::to_string(i), stored_entry(big));
  EXPECT_LE(store.bytes(), 5000u);
  EXPECT_GE(store.size(), 1u);
  EXPECT_TRUE(store.get("resp_9").has_value());
  EXPECT_FALSE(store.get("resp_0").has_value());
}

TEST(ResponseStore, AnEntryLargerThanTheWholeBoundIsNotKept) {
  ResponseStore store(/*max_entries=*/100, /*max_bytes=*/100);
  store.put("resp_small", stored_entry("a"));
  store.put("resp_big", stored_entry(std::string(1000, 'x')));
  EXPECT_FALSE(store.get("resp_big").has_value());
  EXPECT_TRUE(store.get("resp_small").has_value());
}

TEST(ResponseStore, PuttingAnIdAgainReplacesItsEntry) {
  ResponseStore store(/*max_entries=*/2);
  store.put("resp_a", stored_entry("one"));
  store.put("resp_a", stored_entry("two"));
  store.put("resp_b", stored_entry("b"));
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.get("resp_a")->response["output_text"], "two");
}

TEST(ResponseStore, ManyThreadsPutAndGetAtOnce) {
  ResponseStore store(/*max_entries=*/50);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&store, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string id = "resp_" + std::to_string(t) + "_" + std::to_string(i);
        store.put(id, stored_entry(id));
        (void)store.get(id);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(store.size(), 50u);
}

}  // namespace
}  // namespace met
