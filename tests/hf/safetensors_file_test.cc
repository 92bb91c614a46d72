// Tests for SafetensorsFile (src/hf/safetensors_file.h): files built by hand,
// every corruption the parser must name, and the shared model's real file
// (skipped with a message when ../shared is absent).
#include "hf/safetensors_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "hf_test_support.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using ::testing::HasSubstr;
using testing::FakeTensor;

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<FakeTensor> two_tensors() {
  return {{"a", "F32", {2, 3}, testing::f32_bytes({1, 2, 3, 4, 5, 6})},
          {"b", "BF16", {4}, testing::bf16_bytes({1, 2, 3, 4})}};
}

TEST(SafetensorsFile, ReadsTensorsAndMetadataInPlace) {
  const std::string file = testing::safetensors_file(two_tensors(), {{"format", "pt"}});
  Result<SafetensorsFile> st = SafetensorsFile::parse(bytes_of(file), "hand-built");
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  ASSERT_EQ(st->tensors().size(), 2u);
  const SafetensorsTensor* a = st->find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, SafetensorsDtype::kF32);
  EXPECT_EQ(a->shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(a->num_elements, 6u);
  ASSERT_EQ(a->bytes.size(), 24u);
  EXPECT_GE(a->bytes.data(), bytes_of(file).data());  // a view into the bytes, not a copy
  EXPECT_LT(a->bytes.data(), bytes_of(file).data() + file.size());
  float values[6];
  std::memcpy(values, a->bytes.data(), 24);
  EXPECT_EQ(values[5], 6.0f);
  EXPECT_EQ(st->find("b")->dtype, SafetensorsDtype::kBF16);
  EXPECT_EQ(st->find("missing"), nullptr);
  EXPECT_EQ(st->metadata().at("format"), "pt");
}

TEST(SafetensorsFile, DtypeNamesRoundTrip) {
  for (const char* name : {"F64", "F32", "F16", "BF16", "F8_E4M3", "I64", "I8", "U8", "BOOL"}) {
    const std::optional<SafetensorsDtype> d = parse_safetensors_dtype(name);
    ASSERT_TRUE(d.has_value()) << name;
    EXPECT_EQ(safetensors_dtype_name(*d), name);
  }
  EXPECT_FALSE(parse_safetensors_dtype("F12").has_value());
  EXPECT_EQ(safetensors_dtype_bytes(SafetensorsDtype::kBF16), 2u);
}

TEST(SafetensorsFile, AScalarAndAnEmptyTensorParse) {
  const std::vector<FakeTensor> tensors = {{"scalar", "F32", {}, testing::f32_bytes({7})},
                                           {"empty", "F16", {0, 4}, {}}};
  Result<SafetensorsFile> st = SafetensorsFile::parse(bytes_of(testing::safetensors_file(tensors)), "");
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  EXPECT_EQ(st->find("scalar")->num_elements, 1u);
  EXPECT_EQ(st->find("empty")->num_elements, 0u);
}

struct CorruptCase {
  const char* what;
  std::string file;
  const char* message;
};

std::string with_header(const std::string& json) { return testing::safetensors_file(json, two_tensors()); }

std::vector<CorruptCase> corrupt_cases() {
  const std::string good = testing::safetensors_file(two_tensors());
  std::string long_length = good;
  long_length[0] = '\xff';
  long_length[1] = '\xff';
  return {
      {"shorter than the length field", "abc", "3 bytes is too short"},
      {"length past the end", long_length, "runs past the end of the file"},
      {"header not JSON", with_header("{not json"), "header is not a JSON object"},
      {"header an array", with_header("[1, 2]"), "header is not a JSON object"},
      {"unknown dtype", with_header(R"({"a": {"dtype": "F12", "shape": [2], "data_offsets": [0, 8]}})"),
       "tensor 'a': unknown dtype 'F12'"},
      {"no dtype", with_header(R"({"a": {"shape": [2], "data_offsets": [0, 8]}})"), "tensor 'a': no 'dtype'"},
      {"offsets past the end", with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 9999]}})"),
       "tensor 'a': data_offsets [0,9999] end past the data section's 32 bytes"},
      {"size mismatch", with_header(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})"),
       "tensor 'a': 3 F32 elements of shape [3] need 12 bytes"},
      {"reversed offsets", with_header(R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})"),
       "tensor 'a': data_offsets [8,0] are not a range"},
      {"negative dimension", with_header(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})"),
       "tensor 'a': shape [-1] has a dimension"},
      {"overlap", with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                  "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})"),
       "tensors 'a' and 'b' overlap"},
      {"metadata not strings", with_header(R"({"__metadata__": {"format": 1}})"), "'__metadata__' key 'format'"},
      {"offsets not a pair", with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})"),
       "tensor 'a': 'data_offsets' is not a [begin, end] pair"},
      // A hostile file's names are quoted on one printable line (the fuzz
      // smoke found a refusal that quoted a name's newline raw).
      {"a name with a newline", with_header(R"({"a\nb": {"shape": [2], "data_offsets": [0, 8]}})"),
       R"(tensor 'a\nb': no 'dtype')"},
      {"a dtype with a newline", with_header(R"({"a": {"dtype": "F\n", "shape": [2], "data_offsets": [0, 8]}})"),
       R"(tensor 'a': unknown dtype 'F\n')"},
      {"a metadata key with a tab", with_header(R"({"__metadata__": {"x\ty": 1}})"), R"('__metadata__' key 'x\ty')"},
  };
}

TEST(SafetensorsFile, CorruptFilesAreRefusedNamingTheFileAndTheTensor) {
  for (const CorruptCase& c : corrupt_cases()) {
    Result<SafetensorsFile> st = SafetensorsFile::parse(bytes_of(c.file), "bad.safetensors");
    ASSERT_FALSE(st.ok()) << c.what;
    EXPECT_EQ(st.status().code(), StatusCode::kDataLoss) << c.what;
    EXPECT_THAT(st.status().message(), HasSubstr("bad.safetensors: ")) << c.what;
    EXPECT_THAT(st.status().message(), HasSubstr(c.message)) << c.what;
    EXPECT_EQ(st.status().message().find_first_of("\n\t"), std::string::npos) << c.what;
  }
}

TEST(SafetensorsFile, OpenMapsTheFileAndHandsTheMappingOn) {
  testing::TempDir dir;
  testing::write_file(dir.file("m.safetensors"), testing::safetensors_file(two_tensors()));
  Result<SafetensorsFile> st = SafetensorsFile::open(dir.file("m.safetensors"));
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  const std::span<const uint8_t> a = st->find("a")->bytes;
  std::optional<MappedFile> mapping = st->release_mapping();
  ASSERT_TRUE(mapping.has_value());
  EXPECT_GE(a.data(), mapping->data());
  EXPECT_LE(a.data() + a.size(), mapping->data() + mapping->size());
  EXPECT_FALSE(st->release_mapping().has_value());
}

TEST(SafetensorsFile, OpenOfAMissingFileNamesIt) {
  Result<SafetensorsFile> st = SafetensorsFile::open("/nonexistent/m.safetensors");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.status().message(), HasSubstr("/nonexistent/m.safetensors"));
}

TEST(SafetensorsFile, ReadsTheSharedTinyStoriesModel) {
  MET_REQUIRE_SHARED(path, "models/tinystories-656k-hf/model.safetensors");
  Result<SafetensorsFile> st = SafetensorsFile::open(path);
  ASSERT_TRUE(st.ok()) << st.status().to_string();
  EXPECT_EQ(st->tensors().size(), 20u);  // README.md: 20 tensors, all F32, 656,000 parameters
  uint64_t params = 0;
  for (const SafetensorsTensor& t : st->tensors()) {
    EXPECT_EQ(t.dtype, SafetensorsDtype::kF32) << t.name;
    params += t.num_elements;
  }
  EXPECT_EQ(params, 656000u);
  EXPECT_EQ(st->find("model.embed_tokens.weight"), nullptr);
  ASSERT_NE(st->find("lm_head.weight"), nullptr);
  EXPECT_EQ(st->find("lm_head.weight")->shape, (std::vector<uint64_t>{2048, 128}));
  EXPECT_EQ(st->metadata().at("model.embed_tokens.weight"), "lm_head.weight");
}

}  // namespace
}  // namespace met
