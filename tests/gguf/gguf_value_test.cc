// Tests for GgufValue, GgufArray and GgufMetadata (src/gguf/gguf_value.h):
// value types chosen by the constructors, describe(), insertion order, and the
// typed getters' results and errors. Also quote_bytes() (src/gguf/quote_bytes.h).
#include "gguf/gguf_value.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gguf/quote_bytes.h"

namespace met {
namespace {

using ::testing::HasSubstr;

TEST(GgufValue, ConstructorsPickTheMatchingValueType) {
  EXPECT_EQ(GgufValue(uint8_t{1}).type(), GgufType::kUint8);
  EXPECT_EQ(GgufValue(int8_t{-1}).type(), GgufType::kInt8);
  EXPECT_EQ(GgufValue(uint16_t{1}).type(), GgufType::kUint16);
  EXPECT_EQ(GgufValue(int16_t{-1}).type(), GgufType::kInt16);
  EXPECT_EQ(GgufValue(uint32_t{1}).type(), GgufType::kUint32);
  EXPECT_EQ(GgufValue(int32_t{-1}).type(), GgufType::kInt32);
  EXPECT_EQ(GgufValue(1.5f).type(), GgufType::kFloat32);
  EXPECT_EQ(GgufValue(true).type(), GgufType::kBool);
  EXPECT_EQ(GgufValue("text").type(), GgufType::kString);
  EXPECT_EQ(GgufValue(std::string("text")).type(), GgufType::kString);
  EXPECT_EQ(GgufValue(uint64_t{1}).type(), GgufType::kUint64);
  EXPECT_EQ(GgufValue(int64_t{-1}).type(), GgufType::kInt64);
  EXPECT_EQ(GgufValue(2.5).type(), GgufType::kFloat64);
  EXPECT_EQ(GgufValue::array(std::vector<std::string>{"a"}).type(), GgufType::kArray);
}

TEST(GgufValue, TypedArrayConstructorsSetTheElementType) {
  const auto elem_type = [](const GgufValue& v) {
    return std::get<GgufArray>(v.storage()).elem_type;
  };
  EXPECT_EQ(elem_type(GgufValue::array(std::vector<std::string>{"a", "b"})), GgufType::kString);
  EXPECT_EQ(elem_type(GgufValue::array(std::vector<float>{1.0f})), GgufType::kFloat32);
  EXPECT_EQ(elem_type(GgufValue::array(std::vector<int32_t>{1})), GgufType::kInt32);
  EXPECT_EQ(elem_type(GgufValue::array(std::vector<uint32_t>{1})), GgufType::kUint32);
  EXPECT_EQ(elem_type(GgufValue::array(std::vector<GgufArray>{GgufArray{}})), GgufType::kArray);
  EXPECT_EQ(std::get<GgufArray>(GgufValue::array(std::vector<float>{1, 2, 3}).storage()).size(),
            3u);
}

TEST(GgufValue, ValidTypeIdsAreZeroToTwelve) {
  for (uint32_t raw = 0; raw <= 12; ++raw) EXPECT_TRUE(is_valid_gguf_type(raw));
  EXPECT_FALSE(is_valid_gguf_type(13));
  EXPECT_FALSE(is_valid_gguf_type(0xffffffffu));
  EXPECT_EQ(gguf_type_name(GgufType::kFloat32), "float32");
  EXPECT_EQ(gguf_type_name(GgufType::kArray), "array");
}

TEST(GgufValue, DescribesScalarsAndQuotedStrings) {
  EXPECT_EQ(GgufValue(uint8_t{7}).describe(), "7");
  EXPECT_EQ(GgufValue(int8_t{-7}).describe(), "-7");
  EXPECT_EQ(GgufValue(uint32_t{4294967295u}).describe(), "4294967295");
  EXPECT_EQ(GgufValue(1e-5f).describe(), "1e-05");
  EXPECT_EQ(GgufValue(true).describe(), "true");
  EXPECT_EQ(GgufValue("llama").describe(), "\"llama\"");
  EXPECT_EQ(GgufValue("a\nb\"c").describe(), "\"a\\nb\\\"c\"");
}

TEST(GgufValue, DescribesShortArraysInFullAndLongOnesByCount) {
  EXPECT_EQ(GgufValue::array(std::vector<int32_t>{1, 2, 3}).describe(), "[1, 2, 3]");
  EXPECT_EQ(GgufValue::array(std::vector<std::string>{"a", "b"}).describe(), "[\"a\", \"b\"]");
  EXPECT_EQ(GgufValue::array(std::vector<std::string>(32000, "x")).describe(),
            "[array of 32000 string]");
  EXPECT_EQ(GgufValue(GgufArray{GgufType::kBool, std::vector<bool>{true, false}}).describe(),
            "[true, false]");
  GgufArray inner{GgufType::kInt32, std::vector<int32_t>{1, 2}};
  EXPECT_EQ(GgufValue::array(std::vector<GgufArray>{inner, inner}).describe(), "[[1, 2], [1, 2]]");
}

TEST(GgufValue, DescribeCutsLongStrings) {
  const std::string description = GgufValue(std::string(1000, 'x')).describe();
  EXPECT_LT(description.size(), 100u);
  EXPECT_THAT(description, HasSubstr("..."));
}

TEST(QuoteBytes, EscapesControlBytesAndCutsLongText) {
  EXPECT_EQ(quote_bytes("abc"), "'abc'");
  EXPECT_EQ(quote_bytes(std::string("a\0b", 3)), "'a\\x00b'");
  EXPECT_EQ(quote_bytes("tab\there\nline"), "'tab\\there\\nline'");
  EXPECT_EQ(quote_bytes("it's"), "'it\\'s'");
  EXPECT_EQ(quote_bytes("\xe2\x96\x81"), "'\\xe2\\x96\\x81'");
  EXPECT_EQ(quote_bytes("abcdef", 3), "'abc'...");
}

GgufMetadata sample_metadata() {
  GgufMetadata metadata;
  metadata.set("general.architecture", "llama");
  metadata.set("llama.block_count", uint32_t{5});
  metadata.set("small", uint8_t{7});
  metadata.set("negative", int32_t{-3});
  metadata.set("big", uint64_t{1} << 40);
  metadata.set("huge", ~uint64_t{0});
  metadata.set("eps", 1e-5f);
  metadata.set("theta", 10000.0);
  metadata.set("flag", true);
  metadata.set("tokens", GgufValue::array(std::vector<std::string>{"<s>", "</s>"}));
  metadata.set("scores", GgufValue::array(std::vector<float>{0.0f, -1.0f}));
  metadata.set("types", GgufValue::array(std::vector<int32_t>{1, 3}));
  metadata.set("unsigned_ids",
               GgufValue(GgufArray{GgufType::kUint64, std::vector<uint64_t>{1, ~uint64_t{0}}}));
  return metadata;
}

TEST(GgufMetadata, KeepsInsertionOrderAndReplacesInPlace) {
  GgufMetadata metadata;
  metadata.set("b", uint32_t{1});
  metadata.set("a", uint32_t{2});
  metadata.set("b", "replaced");
  ASSERT_EQ(metadata.size(), 2u);
  EXPECT_EQ(metadata.entries()[0].first, "b");
  EXPECT_EQ(metadata.entries()[0].second, GgufValue("replaced"));
  EXPECT_EQ(metadata.entries()[1].first, "a");
  EXPECT_TRUE(metadata.contains("a"));
  EXPECT_FALSE(metadata.contains("c"));
  EXPECT_EQ(metadata.find("c"), nullptr);
}

TEST(GgufMetadata, IntegerGettersAcceptAnyIntegerTypeThatFits) {
  const GgufMetadata metadata = sample_metadata();
  EXPECT_EQ(*metadata.get_u32("llama.block_count"), 5u);
  EXPECT_EQ(*metadata.get_u32("small"), 7u);
  EXPECT_EQ(*metadata.get_u64("small"), 7u);
  EXPECT_EQ(*metadata.get_i64("negative"), -3);
  EXPECT_EQ(*metadata.get_u64("big"), uint64_t{1} << 40);
  EXPECT_EQ(*metadata.get_i64("big"), int64_t{1} << 40);
  EXPECT_EQ(*metadata.get_u64("huge"), ~uint64_t{0});
}

TEST(GgufMetadata, IntegerGettersRefuseValuesThatDoNotFit) {
  const GgufMetadata metadata = sample_metadata();
  const Result<uint32_t> big = metadata.get_u32("big");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(big.status().message(), HasSubstr("'big' = 1099511627776 does not fit uint32"));
  const Result<uint64_t> negative = metadata.get_u64("negative");
  ASSERT_FALSE(negative.ok());
  EXPECT_THAT(negative.status().message(), HasSubstr("'negative' = -3 does not fit uint64"));
  EXPECT_FALSE(metadata.get_i64("huge").ok());
}

TEST(GgufMetadata, MissingKeyIsNotFoundNamingTheKey) {
  const GgufMetadata metadata = sample_metadata();
  const Result<uint32_t> missing = metadata.get_u32("llama.embedding_length");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "missing metadata key 'llama.embedding_length'");
  EXPECT_EQ(metadata.get_string("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(metadata.get_string_array("nope").status().code(), StatusCode::kNotFound);
}

TEST(GgufMetadata, MistypedKeyNamesTheKeyTheFoundTypeAndTheExpectedOne) {
  const GgufMetadata metadata = sample_metadata();
  const Result<uint32_t> as_int = metadata.get_u32("general.architecture");
  ASSERT_FALSE(as_int.ok());
  EXPECT_EQ(as_int.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(as_int.status().message(),
            "metadata key 'general.architecture' is string, expected an integer");
  EXPECT_EQ(metadata.get_string("llama.block_count").status().message(),
            "metadata key 'llama.block_count' is uint32, expected string");
  EXPECT_EQ(metadata.get_bool("eps").status().message(),
            "metadata key 'eps' is float32, expected bool");
  EXPECT_EQ(metadata.get_f32("flag").status().message(),
            "metadata key 'flag' is bool, expected float32");
  EXPECT_EQ(metadata.get_string_array("scores").status().message(),
            "metadata key 'scores' is array of float32, expected array of string");
  EXPECT_EQ(metadata.get_f32_array("tokens").status().message(),
            "metadata key 'tokens' is array of string, expected array of float32");
  EXPECT_EQ(metadata.get_int_array("tokens").status().message(),
            "metadata key 'tokens' is array of string, expected array of integers");
  EXPECT_EQ(metadata.get_array("flag").status().message(),
            "metadata key 'flag' is bool, expected an array");
  EXPECT_EQ(metadata.get_u32("tokens").status().message(),
            "metadata key 'tokens' is array of string, expected an integer");
}

TEST(GgufMetadata, FloatStringBoolAndArrayGettersReturnTheValues) {
  const GgufMetadata metadata = sample_metadata();
  EXPECT_FLOAT_EQ(*metadata.get_f32("eps"), 1e-5f);
  EXPECT_FLOAT_EQ(*metadata.get_f32("theta"), 10000.0f);
  EXPECT_TRUE(*metadata.get_bool("flag"));
  EXPECT_EQ(*metadata.get_string("general.architecture"), "llama");
  EXPECT_EQ(*metadata.get_string_array("tokens"), (std::vector<std::string>{"<s>", "</s>"}));
  EXPECT_EQ(*metadata.get_f32_array("scores"), (std::vector<float>{0.0f, -1.0f}));
  EXPECT_EQ(*metadata.get_int_array("types"), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ((*metadata.get_array("tokens"))->size(), 2u);
}

TEST(GgufMetadata, IntArrayRefusesElementsPastInt64) {
  const Result<std::vector<int64_t>> ids = sample_metadata().get_int_array("unsigned_ids");
  ASSERT_FALSE(ids.ok());
  EXPECT_THAT(ids.status().message(), HasSubstr("'unsigned_ids' element 1"));
}

TEST(GgufMetadata, FallbackGettersUseTheFallbackOnlyWhenTheKeyIsMissing) {
  const GgufMetadata metadata = sample_metadata();
  EXPECT_EQ(*metadata.get_u32_or("absent", 42), 42u);
  EXPECT_EQ(*metadata.get_u32_or("llama.block_count", 42), 5u);
  EXPECT_FLOAT_EQ(*metadata.get_f32_or("absent", 0.5f), 0.5f);
  EXPECT_FALSE(*metadata.get_bool_or("absent", false));
  EXPECT_EQ(*metadata.get_string_or("absent", "dflt"), "dflt");
  EXPECT_EQ(metadata.get_u32_or("general.architecture", 1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(metadata.get_string_or("flag", "x").status().code(), StatusCode::kInvalidArgument);
}

TEST(GgufMetadata, ArchKeyPrefixesTheArchitecture) {
  const GgufMetadata metadata = sample_metadata();
  EXPECT_EQ(*metadata.architecture(), "llama");
  EXPECT_EQ(*metadata.arch_key("block_count"), "llama.block_count");
  EXPECT_EQ(GgufMetadata().arch_key("block_count").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace met
