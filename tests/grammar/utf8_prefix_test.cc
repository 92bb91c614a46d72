// Tests utf8_step / utf8_completions: strict byte-at-a-time decoding.
#include "grammar/utf8_prefix.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(Utf8Prefix, DecodesAMultiByteCharacterByteByByte) {
  Utf8Step s = utf8_step(0, 0xE2);
  ASSERT_EQ(s.kind, Utf8Step::Kind::kPartial);
  const Utf8Completions c = utf8_completions(s.prefix);
  ASSERT_EQ(c.num_ranges, 1);
  EXPECT_EQ(c.ranges[0].lo, char32_t{0x2000});
  EXPECT_EQ(c.ranges[0].hi, char32_t{0x2FFF});
  s = utf8_step(s.prefix, 0x82);
  ASSERT_EQ(s.kind, Utf8Step::Kind::kPartial);
  s = utf8_step(s.prefix, 0xAC);
  ASSERT_EQ(s.kind, Utf8Step::Kind::kComplete);
  EXPECT_EQ(s.code_point, char32_t{0x20AC});
}

TEST(Utf8Prefix, RejectsBytesThatCanNeverBeValid) {
  EXPECT_EQ(utf8_step(0, 0x80).kind, Utf8Step::Kind::kInvalid);  // continuation first
  EXPECT_EQ(utf8_step(0, 0xC0).kind, Utf8Step::Kind::kInvalid);  // overlong lead
  EXPECT_EQ(utf8_step(0, 0xF5).kind, Utf8Step::Kind::kInvalid);  // past U+10FFFF
  EXPECT_EQ(utf8_step(utf8_step(0, 0xE0).prefix, 0x80).kind, Utf8Step::Kind::kInvalid);  // overlong
  EXPECT_EQ(utf8_step(utf8_step(0, 0xED).prefix, 0xA0).kind, Utf8Step::Kind::kInvalid);  // surrogate
  EXPECT_EQ(utf8_step(utf8_step(0, 0xC3).prefix, 0x41).kind, Utf8Step::Kind::kInvalid);  // not a continuation
}

TEST(Utf8Prefix, CompletionsSkipTheSurrogateBlock) {
  const Utf8Completions c = utf8_completions(utf8_step(0, 0xED).prefix);
  ASSERT_EQ(c.num_ranges, 1);
  EXPECT_EQ(c.ranges[0].lo, char32_t{0xD000});
  EXPECT_EQ(c.ranges[0].hi, char32_t{0xD7FF});
}

}  // namespace
}  // namespace met
