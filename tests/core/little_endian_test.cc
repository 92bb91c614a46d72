// core/little_endian.h: the byte order on disk is fixed, whatever the host's.
#include "core/little_endian.h"

#include <array>
#include <cstdint>

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(LittleEndian, LowByteComesFirst) {
  std::array<uint8_t, 8> b{};
  put_u32(b.data(), 0x11223344u);
  EXPECT_EQ(b[0], 0x44);
  EXPECT_EQ(b[1], 0x33);
  EXPECT_EQ(b[2], 0x22);
  EXPECT_EQ(b[3], 0x11);
  EXPECT_EQ(b[4], 0x00);  // nothing past the 4 bytes is written
  put_u64(b.data(), 0x0102030405060708ull);
  EXPECT_EQ(b[0], 0x08);
  EXPECT_EQ(b[7], 0x01);
}

TEST(LittleEndian, ReadsBackWhatItWrote) {
  std::array<uint8_t, 8> b{};
  for (uint32_t v : {0u, 1u, 0x80000000u, 0xffffffffu, 0xdeadbeefu}) {
    put_u32(b.data(), v);
    EXPECT_EQ(get_u32(b.data()), v);
  }
  for (uint64_t v : {0ull, 0x8000000000000000ull, ~0ull, 0x0123456789abcdefull}) {
    put_u64(b.data(), v);
    EXPECT_EQ(get_u64(b.data()), v);
  }
}

}  // namespace
}  // namespace met
