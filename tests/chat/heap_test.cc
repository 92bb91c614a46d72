// The Heap: stable addresses, and every allocation charged to the budget.
#include "chat/jinja/heap.h"

#include <gtest/gtest.h>

namespace met::jinja {
namespace {

TEST(Heap, AddressesStayValidAsItGrows) {
  Heap heap(1 << 24);
  const Value first = *heap.string(std::string_view("first"));
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(heap.string(std::string(10, 'x')).ok());
  EXPECT_EQ(first.as_string(), "first");
}

TEST(Heap, RefusesAllocationsPastTheBudget) {
  Heap heap(1000);
  EXPECT_TRUE(heap.string(std::string(500, 'x')).ok());
  const auto r = heap.string(std::string(500, 'x'));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_LE(heap.used_bytes(), heap.budget_bytes());
  EXPECT_FALSE(heap.fits(1000));
}

TEST(Heap, ContainerGrowthIsCharged) {
  Heap heap(4096);
  const Value list = *heap.list({});
  const size_t before = heap.used_bytes();
  ASSERT_TRUE(heap.append(list.as_list(), Value::integer(1)).ok());
  EXPECT_GT(heap.used_bytes(), before);
  DictObj* d = *heap.dict();
  const Value key = *heap.string(std::string_view("k"));
  ASSERT_TRUE(heap.set_item(*d, key, Value::integer(1)).ok());
  const size_t after_insert = heap.used_bytes();
  ASSERT_TRUE(heap.set_item(*d, key, Value::integer(2)).ok());
  EXPECT_EQ(heap.used_bytes(), after_insert);  // replacing a value costs nothing
  Status s;
  while (s.ok()) s = heap.append(list.as_list(), Value::integer(1));
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
}

TEST(Heap, EmptyStringsCostNothing) {
  Heap heap(64);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(heap.string(std::string()).ok());
  EXPECT_EQ(heap.used_bytes(), 0u);
}

}  // namespace
}  // namespace met::jinja
