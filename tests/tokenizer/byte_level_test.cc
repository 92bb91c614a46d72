// Tests for src/tokenizer/byte_level.h.
#include "tokenizer/byte_level.h"

#include <set>

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(ByteLevel, SpaceAndNewlineMapToTheirGpt2Symbols) {
  EXPECT_EQ(to_byte_level(" "), "\xC4\xA0");   // Ġ
  EXPECT_EQ(to_byte_level("\n"), "\xC4\x8A");  // Ċ
  EXPECT_EQ(to_byte_level("Hello world"), "Hello\xC4\xA0world");
}

TEST(ByteLevel, PrintableLatin1BytesMapToThemselves) {
  EXPECT_EQ(byte_level_code_point('!'), U'!');
  EXPECT_EQ(byte_level_code_point(0xA1), 0xA1u);
  EXPECT_EQ(byte_level_code_point(0xAD), 0x143u);  // soft hyphen is not printable
  EXPECT_EQ(byte_level_code_point(0x00), 0x100u);
}

TEST(ByteLevel, MappingIsABijection) {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = byte_level_code_point(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second) << b;
    ASSERT_TRUE(byte_level_byte(cp).has_value());
    EXPECT_EQ(*byte_level_byte(cp), b);
  }
  EXPECT_FALSE(byte_level_byte(U' ').has_value());
  EXPECT_FALSE(byte_level_byte(0x4E00).has_value());
}

TEST(ByteLevel, EveryByteStringRoundTrips) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  EXPECT_EQ(from_byte_level(to_byte_level(all)), all);
}

TEST(ByteLevel, CharactersOutsideTheAlphabetPassThroughDecoding) {
  EXPECT_EQ(from_byte_level("<|endoftext|>"), "<|endoftext|>");
  EXPECT_EQ(from_byte_level("\xE4\xB8\x80"), "\xE4\xB8\x80");  // 一 is not in the alphabet
}

}  // namespace
}  // namespace met
