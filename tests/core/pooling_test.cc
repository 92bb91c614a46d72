// Tests for core/pooling.h.
#include "core/pooling.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(Pooling, ReadsLlamaCppsGgufNumbering) {
  EXPECT_EQ(pooling_from_gguf(0), Pooling::kNone);
  EXPECT_EQ(pooling_from_gguf(1), Pooling::kMean);
  EXPECT_EQ(pooling_from_gguf(2), Pooling::kCls);
  EXPECT_EQ(pooling_from_gguf(3), Pooling::kLast);
  EXPECT_EQ(pooling_from_gguf(4), std::nullopt) << "rank (rerankers) is not an embedding pooling";
}

TEST(Pooling, NamesParseBack) {
  for (Pooling p : {Pooling::kNone, Pooling::kMean, Pooling::kCls, Pooling::kLast}) {
    EXPECT_EQ(parse_pooling(pooling_name(p)), p);
  }
  EXPECT_EQ(parse_pooling("max"), std::nullopt);
}

}  // namespace
}  // namespace met
