// Corrupt, truncated and hostile input for GgufFile::parse
// (src/gguf/gguf_reader.h): hand-crafted hostile files each get one kDataLoss
// line naming the field and offset; thousands of mechanical variants (every
// prefix through the header, sampled prefixes past it, seeded bit flips,
// 0xFF/0x00 overwrites at every header offset) of writer-made files and of
// the shared models either parse or fail with a one-line message, never crash
// (this file also runs under ASan+UBSan).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "core/mapped_file.h"
#include "gguf/gguf_file.h"
#include "gguf_test_util.h"
#include "raw_gguf.h"
#include "testing/shared_data.h"

namespace met {
namespace {

using ::testing::HasSubstr;
using testing::kArray;
using testing::kBool;
using testing::kI32;
using testing::kString;
using testing::kU32;
using testing::kU8;
using testing::RawGguf;

constexpr uint64_t kHuge = ~uint64_t{0};

// The status parsing `raw` fails with (kInternal "parsed" if it did not fail).
Status refusal(const RawGguf& raw) {
  Result<GgufFile> file = GgufFile::parse(raw.span(), "");
  if (file.ok()) return Status(StatusCode::kInternal, "unexpectedly parsed");
  return file.status();
}

#define EXPECT_DATA_LOSS(raw, substring)                                           \
  do {                                                                             \
    const Status met_status = refusal(raw);                                        \
    EXPECT_EQ(met_status.code(), StatusCode::kDataLoss) << met_status.to_string(); \
    EXPECT_THAT(met_status.message(), HasSubstr(substring));                       \
    EXPECT_EQ(met_status.message().find('\n'), std::string::npos);                 \
  } while (0)

// A valid one-tensor file: "w", 4 f32 at offset 0, 16 bytes of data.
RawGguf one_tensor_file(uint64_t offset = 0) {
  RawGguf raw;
  raw.header(3, 1, 0).tensor("w", {4}, 0, offset).pad_to(32).zeros(offset + 16);
  return raw;
}

// --- Hand-crafted hostile files --------------------------------------------

TEST(GgufCorrupt, OneTensorBaselineParses) {
  EXPECT_EQ(refusal(one_tensor_file()).message(), "unexpectedly parsed");
}

TEST(GgufCorrupt, RefusesBadMagic) {
  RawGguf raw;
  raw.u32(0x4c4d4747).u32(3).u64(0).u64(0);  // "GGML"
  EXPECT_DATA_LOSS(raw, "gguf: bad magic 'GGML' at offset 0, expected 'GGUF'");
  EXPECT_DATA_LOSS(RawGguf(), "gguf: header: magic past end of file at offset 0 (file is 0 bytes)");
}

TEST(GgufCorrupt, RefusesVersionOneNamingTheVersion) {
  RawGguf raw;
  raw.header(1, 0, 0);
  const Status status = refusal(raw);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("gguf: version 1 files are not supported"));
}

TEST(GgufCorrupt, RefusesUnknownAndByteSwappedVersions) {
  RawGguf unknown;
  unknown.header(7, 0, 0);
  EXPECT_DATA_LOSS(unknown, "unknown version 7 at offset 4");
  RawGguf big_endian;
  big_endian.header(0x03000000, 0, 0);
  EXPECT_EQ(refusal(big_endian).code(), StatusCode::kUnimplemented);
  EXPECT_THAT(refusal(big_endian).message(), HasSubstr("big-endian"));
}

TEST(GgufCorrupt, RefusesHugeTensorAndKeyCounts) {
  RawGguf tensors;
  tensors.header(3, kHuge, 0);
  EXPECT_DATA_LOSS(tensors,
                   "gguf: header: tensor count 18446744073709551615 past end of file at "
                   "offset 8 (file is 24 bytes)");
  RawGguf keys;
  keys.header(3, 0, 1u << 31);
  EXPECT_DATA_LOSS(keys, "header: metadata key count 2147483648 past end of file at offset 16");
}

TEST(GgufCorrupt, RefusesMoreKeysOrTensorsThanAnyModelHas) {
  constexpr uint64_t kOverLimit = (uint64_t{1} << 20) + 1;
  RawGguf keys;  // big enough that the count alone is not past the end
  keys.header(3, 0, kOverLimit).zeros(kOverLimit * 13);
  EXPECT_DATA_LOSS(keys,
                   "header: metadata key count 1048577 at offset 16 is more than met "
                   "accepts (1048576)");
  RawGguf tensors;
  tensors.header(3, kOverLimit, 0).zeros(kOverLimit * 32);
  EXPECT_DATA_LOSS(tensors, "header: tensor count 1048577 at offset 8 is more than met accepts");
}

TEST(GgufCorrupt, RefusesHugeStringLengths) {
  RawGguf key;
  key.header(3, 0, 1).u64(kHuge).zeros(8);
  EXPECT_DATA_LOSS(key,
                   "gguf: metadata key #0: name of 18446744073709551615 bytes past end of "
                   "file at offset 24 (file is 40 bytes)");
  RawGguf value;
  value.header(3, 0, 1).key("general.name", kString).u64(1000).zeros(8);
  EXPECT_DATA_LOSS(value,
                   "metadata key #0 'general.name': string of 1000 bytes past end of file "
                   "at offset 48");
  RawGguf element;
  element.header(3, 0, 1).key("tokens", kArray).u32(kString).u64(2).str("a").u64(kHuge);
  EXPECT_DATA_LOSS(element,
                   "metadata key #0 'tokens' element 1: string of 18446744073709551615 "
                   "bytes past end of file");
}

TEST(GgufCorrupt, RefusesHugeArrayCounts) {
  RawGguf raw;
  raw.header(3, 0, 1).key("tokenizer.ggml.tokens", kArray).u32(kString).u64(4294967295u);
  raw.zeros(64);
  EXPECT_DATA_LOSS(raw,
                   "gguf: metadata key #0 'tokenizer.ggml.tokens': array of 4294967295 "
                   "string past end of file at offset 61 (file is 133 bytes)");
  RawGguf scalars;
  scalars.header(3, 0, 1).key("scores", kArray).u32(6).u64(kHuge / 2);
  EXPECT_DATA_LOSS(scalars, "'scores': array of 9223372036854775807 float32 past end of file");
}

TEST(GgufCorrupt, RefusesUnknownValueTypes) {
  RawGguf raw;
  raw.header(3, 0, 1).key("k", 13).u32(0);
  EXPECT_DATA_LOSS(raw, "gguf: metadata key #0 'k': unknown value type 13 at offset 33");
  RawGguf element;
  element.header(3, 0, 1).key("k", kArray).u32(0xffffffffu).u64(0);
  EXPECT_DATA_LOSS(element, "metadata key #0 'k': unknown array element type 4294967295");
}

TEST(GgufCorrupt, RefusesBoolsThatAreNeitherZeroNorOne) {
  RawGguf raw;
  raw.header(3, 0, 1).key("flag", kBool).u8(2);
  EXPECT_DATA_LOSS(raw, "metadata key #0 'flag': bool value 2 at offset 40 is neither 0 nor 1");
}

TEST(GgufCorrupt, RefusesDuplicateKeys) {
  RawGguf raw;
  raw.header(3, 0, 2).key("a", kU8).u8(1).key("a", kU8).u8(2);
  EXPECT_DATA_LOSS(raw, "metadata key #1 'a' at offset 38 duplicates metadata key #0");
}

TEST(GgufCorrupt, RefusesArraysNestedTooDeep) {
  RawGguf raw;
  raw.header(3, 0, 1).key("deep", kArray);
  for (int depth = 0; depth < kGgufMaxArrayDepth; ++depth) raw.u32(kArray).u64(1);
  raw.u32(kI32).u64(0);
  EXPECT_DATA_LOSS(raw,
                   "metadata key #0 'deep' element 0 element 0 element 0 element 0: arrays "
                   "nested deeper than 4 at offset 88");
  RawGguf just_fits;
  just_fits.header(3, 0, 1).key("deep", kArray);
  for (int depth = 1; depth < kGgufMaxArrayDepth; ++depth) just_fits.u32(kArray).u64(1);
  just_fits.u32(kI32).u64(0);
  EXPECT_EQ(refusal(just_fits).message(), "unexpectedly parsed");
}

TEST(GgufCorrupt, RefusesBadAlignment) {
  for (uint32_t alignment : {0u, 48u, 3u}) {
    RawGguf raw;
    raw.header(3, 0, 1).key("general.alignment", kU32).u32(alignment);
    EXPECT_DATA_LOSS(raw, fmt::format("metadata key 'general.alignment' = {} at offset 53 is not "
                                      "a power of two in [1, 2147483648]",
                                      alignment));
  }
  RawGguf text;
  text.header(3, 0, 1).key("general.alignment", kString).str("32");
  EXPECT_DATA_LOSS(text,
                   "metadata key 'general.alignment' at offset 53 is \"32\", expected uint32");
}

TEST(GgufCorrupt, RefusesUnknownGgmlTypes) {
  for (uint32_t type : {4u, 31u, 36u, 1000u}) {
    RawGguf raw;
    raw.header(3, 1, 0).tensor("w", {32}, type, 0).pad_to(32).zeros(1024);
    EXPECT_DATA_LOSS(raw,
                     fmt::format("gguf: tensor #0 'w': unknown ggml type {} at offset 45", type));
  }
}

TEST(GgufCorrupt, RefusesZeroOrTooManyDimensions) {
  RawGguf none;
  none.header(3, 1, 0).str("w").u32(0).u32(0).u64(0).zeros(64);
  EXPECT_DATA_LOSS(none, "tensor #0 'w': 0 dimensions at offset 33 (must be 1 to 4)");
  RawGguf five;
  five.header(3, 1, 0).tensor("w", {1, 1, 1, 1, 1}, 0, 0).pad_to(32).zeros(64);
  EXPECT_DATA_LOSS(five, "tensor #0 'w': 5 dimensions at offset 33 (must be 1 to 4)");
}

TEST(GgufCorrupt, RefusesZeroAndOverflowingDimensions) {
  RawGguf zero;
  zero.header(3, 1, 0).tensor("w", {4, 0}, 0, 0).pad_to(32).zeros(64);
  EXPECT_DATA_LOSS(zero, "tensor #0 'w': dimension 1 is 0 at offset 45");
  RawGguf overflow;
  overflow.header(3, 1, 0).tensor("w", {1u << 31, 1u << 31, 1u << 31}, 0, 0).pad_to(32);
  EXPECT_DATA_LOSS(overflow,
                   "tensor #0 'w': shape [2147483648, 2147483648, 2147483648] at "
                   "offset 37 has more elements than int64 can count");
  RawGguf bytes_overflow;
  bytes_overflow.header(3, 1, 0).tensor("w", {uint64_t{1} << 62}, 28 /* f64 */, 0).pad_to(32);
  EXPECT_DATA_LOSS(bytes_overflow,
                   "tensor #0 'w': 4611686018427387904 elements of f64 take more "
                   "bytes than uint64 can count");
}

TEST(GgufCorrupt, RefusesAFirstDimensionThatIsNotAWholeNumberOfBlocks) {
  RawGguf raw;
  raw.header(3, 1, 0).tensor("w", {48, 2}, 8 /* q8_0 */, 0).pad_to(32).zeros(1024);
  EXPECT_DATA_LOSS(raw,
                   "tensor #0 'w': first dimension 48 is not a multiple of q8_0's block "
                   "size 32");
}

TEST(GgufCorrupt, RefusesMxfp4TensorsOfPartBlocksOrShortData) {
  RawGguf part;
  part.header(3, 1, 0).tensor("w", {48, 2}, 39 /* mxfp4 */, 0).pad_to(32).zeros(1024);
  EXPECT_DATA_LOSS(part, "tensor #0 'w': first dimension 48 is not a multiple of mxfp4's block size 32");
  RawGguf short_data;  // 2 rows of 2 blocks of 17 bytes: 68
  short_data.header(3, 1, 0).tensor("w", {64, 2}, 39 /* mxfp4 */, 0).pad_to(32).zeros(67);
  EXPECT_DATA_LOSS(short_data, "tensor #0 'w': 68 bytes of data at data offset 0 past end of file");
}

TEST(GgufCorrupt, RefusesDuplicateTensorNames) {
  RawGguf raw;
  raw.header(3, 2, 0).tensor("w", {4}, 0, 0).tensor("w", {4}, 0, 32).pad_to(32).zeros(64);
  EXPECT_DATA_LOSS(raw, "tensor #1 'w' at offset 57 duplicates the name of tensor #0");
}

TEST(GgufCorrupt, RefusesMisalignedTensorOffsets) {
  EXPECT_DATA_LOSS(one_tensor_file(16),
                   "tensor #0 'w': data offset 16 at offset 49 is not a "
                   "multiple of the alignment 32");
}

TEST(GgufCorrupt, RefusesTensorDataPastEndOfFile) {
  RawGguf raw;
  raw.header(3, 1, 0).tensor("w", {4}, 0, 0).pad_to(32).zeros(15);
  EXPECT_DATA_LOSS(raw,
                   "tensor #0 'w': 16 bytes of data at data offset 0 past end of file "
                   "(data section starts at offset 64, file is 79 bytes)");
  RawGguf far;
  far.header(3, 1, 0).tensor("w", {4}, 0, kHuge - 31).pad_to(32).zeros(16);
  EXPECT_DATA_LOSS(far, "past end of file");
  RawGguf no_data;
  no_data.header(3, 1, 0).tensor("w", {4}, 0, 0);
  EXPECT_DATA_LOSS(no_data, "data section at offset 64 is past end of file (file is 57 bytes)");
}

TEST(GgufCorrupt, RefusesOverlappingTensors) {
  RawGguf raw;
  raw.header(3, 2, 0).tensor("a", {16}, 0, 0).tensor("b", {4}, 0, 32).pad_to(32).zeros(64);
  EXPECT_DATA_LOSS(raw, "tensor #1 'b': data [128, 144) overlaps tensor #0 'a' data [96, 160)");
}

TEST(GgufCorrupt, QuotesHostileNamesOnOneLine) {
  RawGguf raw;
  raw.header(3, 0, 1).key(std::string_view("evil\nkey\0", 9), 13);
  const Status status = refusal(raw);
  EXPECT_THAT(status.message(), HasSubstr("'evil\\nkey\\x00'"));
  EXPECT_EQ(status.message().find('\n'), std::string::npos);
}

// --- Mechanical variants ----------------------------------------------------

// Tallies variants; keeps the first few that broke the contract.
class VariantChecker {
 public:
  void check(std::span<const uint8_t> bytes, const std::string& label) {
    Result<GgufFile> file = GgufFile::parse(bytes, "");
    if (!file.ok()) {
      ++num_refused_;
      const std::string& message = file.status().message();
      if (message.empty() || message.find('\n') != std::string::npos) {
        problems_.push_back(fmt::format("{}: bad message '{}'", label, message));
      }
      return;
    }
    ++num_parsed_;
    uint64_t sum = 0;  // touching every tensor's first and last byte lets ASan check the spans
    for (const GgufTensorInfo& info : file->tensors()) {
      const std::span<const uint8_t> data = file->tensor_data(info);
      if (data.size() != info.num_bytes) problems_.push_back(label + ": tensor span size");
      sum += data.front() + data.back();
    }
    for (const auto& [key, value] : file->metadata().entries()) sum += value.describe().size();
    sink_ += sum;
  }

  size_t num_variants() const { return num_parsed_ + num_refused_; }
  size_t num_refused() const { return num_refused_; }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  size_t num_parsed_ = 0;
  size_t num_refused_ = 0;
  uint64_t sink_ = 0;
  std::vector<std::string> problems_;
};

// Every prefix up to header_end + 64, then num_samples prefixes past it.
void check_truncations(const std::vector<uint8_t>& bytes, uint64_t header_end, size_t num_samples,
                       std::mt19937_64& rng, VariantChecker& checker) {
  const size_t every_up_to = std::min<size_t>(bytes.size(), header_end + 64);
  for (size_t n = 0; n <= every_up_to; ++n)
    checker.check({bytes.data(), n}, fmt::format("prefix {}", n));
  if (every_up_to >= bytes.size()) return;
  std::uniform_int_distribution<size_t> length(every_up_to, bytes.size() - 1);
  for (size_t i = 0; i < num_samples; ++i) {
    const size_t n = length(rng);
    checker.check({bytes.data(), n}, fmt::format("prefix {}", n));
  }
}

// num_flips variants, each with 1 to 3 random bit flips in [0, region_end).
void check_bit_flips(std::vector<uint8_t>& bytes, uint64_t region_end, size_t num_variants,
                     std::mt19937_64& rng, VariantChecker& checker) {
  std::uniform_int_distribution<size_t> position(0, region_end - 1);
  for (size_t v = 0; v < num_variants; ++v) {
    size_t flips[3];
    const size_t num_flips = 1 + v % 3;
    for (size_t f = 0; f < num_flips; ++f) {
      flips[f] = position(rng) * 8 + rng() % 8;
      bytes[flips[f] / 8] ^= static_cast<uint8_t>(1u << (flips[f] % 8));
    }
    checker.check(bytes, fmt::format("flip variant {} (first bit {})", v, flips[0]));
    for (size_t f = num_flips; f-- > 0;)
      bytes[flips[f] / 8] ^= static_cast<uint8_t>(1u << (flips[f] % 8));
  }
}

// At each position, overwrites 8 bytes with 0xFF (absurd counts and lengths),
// 4 bytes with 0xFF (unknown types, n_dims) and 8 bytes with 0x00.
void check_overwrites(std::vector<uint8_t>& bytes, const std::vector<size_t>& positions,
                      VariantChecker& checker) {
  struct Pattern {
    size_t width;
    uint8_t value;
  };
  for (size_t at : positions) {
    for (const Pattern p : {Pattern{8, 0xff}, Pattern{4, 0xff}, Pattern{8, 0x00}}) {
      const size_t width = std::min(p.width, bytes.size() - at);
      uint8_t saved[8];
      std::copy_n(bytes.begin() + at, width, saved);
      std::fill_n(bytes.begin() + at, width, p.value);
      checker.check(bytes, fmt::format("{} bytes of {:#x} at {}", width, p.value, at));
      std::copy_n(saved, width, bytes.begin() + at);
    }
  }
}

std::vector<size_t> every_position(size_t end) {
  std::vector<size_t> positions(end);
  for (size_t i = 0; i < end; ++i) positions[i] = i;
  return positions;
}

void expect_no_problems(const VariantChecker& checker, size_t min_variants) {
  EXPECT_GE(checker.num_variants(), min_variants);
  EXPECT_GT(checker.num_refused(), 0u);
  for (size_t i = 0; i < std::min<size_t>(checker.problems().size(), 10); ++i) {
    ADD_FAILURE() << checker.problems()[i];
  }
}

TEST(GgufCorrupt, MangledWriterFilesParseOrFailWithOneLine) {
  for (uint64_t alignment : {32u, 64u}) {
    std::vector<uint8_t> bytes = *testing::sample_writer(alignment).write_buffer();
    const uint64_t header_end = GgufFile::parse(bytes, "")->data_offset();
    std::mt19937_64 rng(alignment);
    VariantChecker checker;
    check_truncations(bytes, header_end, 200, rng, checker);
    check_bit_flips(bytes, header_end, 3000, rng, checker);
    check_bit_flips(bytes, bytes.size(), 500, rng, checker);
    check_overwrites(bytes, every_position(header_end), checker);
    expect_no_problems(checker, 5000);
  }
}

// The shared model with the smallest header (14 KB, mostly vocabulary), mangled
// the same way.
TEST(GgufCorrupt, MangledStories260KParsesOrFailsWithOneLine) {
  MET_REQUIRE_SHARED(path, "models/stories260K.gguf");
  Result<MappedFile> mapping = MappedFile::open(path);
  ASSERT_TRUE(mapping.ok());
  std::vector<uint8_t> bytes(mapping->bytes().begin(), mapping->bytes().end());
  const uint64_t header_end = GgufFile::parse(bytes, "")->data_offset();
  std::mt19937_64 rng(260);
  VariantChecker checker;
  check_truncations(bytes, header_end, 200, rng, checker);
  check_bit_flips(bytes, header_end, 2000, rng, checker);
  // Every position of the header's first 256 bytes and of its last 3 KB (the
  // tensor table), and 1000 sampled in between.
  std::vector<size_t> positions = every_position(256);
  for (size_t at = header_end - 3072; at < header_end; ++at) positions.push_back(at);
  std::uniform_int_distribution<size_t> position(0, header_end - 1);
  for (int i = 0; i < 1000; ++i) positions.push_back(position(rng));
  check_overwrites(bytes, positions, checker);
  expect_no_problems(checker, 10000);
}

// The other shared model's 700 KB header is sampled, not swept.
TEST(GgufCorrupt, MangledLlamaTinyRandomParsesOrFailsWithOneLine) {
  MET_REQUIRE_SHARED(path, "models/llama-2-tiny-random.gguf");
  Result<MappedFile> mapping = MappedFile::open(path);
  ASSERT_TRUE(mapping.ok());
  std::vector<uint8_t> bytes(mapping->bytes().begin(), mapping->bytes().end());
  const uint64_t header_end = GgufFile::parse(bytes, "")->data_offset();
  std::mt19937_64 rng(32000);
  VariantChecker checker;
  std::uniform_int_distribution<size_t> length(0, bytes.size());
  for (int i = 0; i < 40; ++i) {
    const size_t n = length(rng);
    checker.check({bytes.data(), n}, fmt::format("prefix {}", n));
  }
  check_bit_flips(bytes, header_end, 40, rng, checker);
  check_overwrites(bytes, every_position(64), checker);
  expect_no_problems(checker, 200);
}

}  // namespace
}  // namespace met
