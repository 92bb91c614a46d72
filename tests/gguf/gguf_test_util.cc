// Test fixtures for the gguf tests; see gguf_test_util.h.
#include "gguf_test_util.h"

#include <algorithm>
#include <filesystem>

#include "core/check.h"

namespace met::testing {

std::vector<std::string> shared_gguf_paths(const std::string& shared_dir) {
  std::vector<std::string> paths;
  for (const char* folder : {"models", "tokenizer-vectors"}) {
    const std::filesystem::path dir = std::filesystem::path(shared_dir) / folder;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".gguf") {
        paths.push_back(entry.path().string());
      }
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

GgufMetadata sample_metadata() {
  using namespace std::string_literals;
  GgufMetadata m;
  m.set("general.architecture", "llama");
  m.set("general.name", "tiny \xe2\x96\x81model\0with NUL"s);
  m.set("test.u8", uint8_t{255});
  m.set("test.i8", int8_t{-128});
  m.set("test.u16", uint16_t{65535});
  m.set("test.i16", int16_t{-32768});
  m.set("test.u32", uint32_t{4294967295u});
  m.set("test.i32", int32_t{-2147483647 - 1});
  m.set("test.f32", -0.0f);
  m.set("test.bool", false);
  m.set("test.string.empty", "");
  m.set("test.u64", ~uint64_t{0});
  m.set("test.i64", int64_t{-9});
  m.set("test.f64", 3.141592653589793);
  m.set("tokenizer.ggml.tokens", GgufValue::array(std::vector<std::string>{
                                     "<unk>", "<s>", "</s>", "\xe2\x96\x81the", "\0"s, ""}));
  m.set("tokenizer.ggml.scores", GgufValue::array(std::vector<float>{0, -1, -2.5f, 3, 4, 5}));
  m.set("tokenizer.ggml.token_type", GgufValue::array(std::vector<int32_t>{2, 3, 3, 1, 6, 1}));
  m.set("test.array.u8", GgufValue(GgufArray{GgufType::kUint8, std::vector<uint8_t>{0, 1, 255}}));
  m.set("test.array.i8", GgufValue(GgufArray{GgufType::kInt8, std::vector<int8_t>{-1, 1}}));
  m.set("test.array.u16", GgufValue(GgufArray{GgufType::kUint16, std::vector<uint16_t>{7}}));
  m.set("test.array.i16", GgufValue(GgufArray{GgufType::kInt16, std::vector<int16_t>{-7, 8}}));
  m.set("test.array.u32", GgufValue::array(std::vector<uint32_t>{1, 2, 3}));
  m.set("test.array.bool", GgufValue(GgufArray{GgufType::kBool, std::vector<bool>{true, false}}));
  m.set("test.array.u64", GgufValue(GgufArray{GgufType::kUint64, std::vector<uint64_t>{1, 2}}));
  m.set("test.array.i64", GgufValue(GgufArray{GgufType::kInt64, std::vector<int64_t>{-1}}));
  m.set("test.array.f64", GgufValue(GgufArray{GgufType::kFloat64, std::vector<double>{0.5}}));
  m.set("test.array.empty", GgufValue::array(std::vector<float>{}));
  const GgufArray ints{GgufType::kInt32, std::vector<int32_t>{1, -2, 3}};
  const GgufArray words{GgufType::kString, std::vector<std::string>{"x", "y\nz"}};
  const GgufArray pair{GgufType::kArray, std::vector<GgufArray>{ints, words}};
  m.set("test.array.nested", GgufValue::array(std::vector<GgufArray>{pair, pair, GgufArray{}}));
  return m;
}

std::vector<uint8_t> sample_tensor_bytes(const std::string& name, uint64_t num_bytes) {
  uint64_t state = 1469598103934665603ull;  // FNV-1a of the name seeds the pattern
  for (const char c : name) state = (state ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  std::vector<uint8_t> bytes(num_bytes);
  for (uint8_t& byte : bytes) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    byte = static_cast<uint8_t>(state >> 56);
  }
  return bytes;
}

GgufWriter sample_writer(uint64_t alignment) {
  GgufWriter writer(alignment);
  const GgufMetadata metadata = sample_metadata();
  for (const auto& [key, value] : metadata.entries()) writer.set(key, value);
  struct Tensor {
    const char* name;
    std::vector<uint64_t> shape;
    GgmlType type;
  };
  const Tensor tensors[] = {
      {"token_embd.weight", {8, 6}, GgmlType::kF32},
      {"blk.0.attn_q.weight", {64, 3}, GgmlType::kQ8_0},
      {"blk.0.ffn_up.weight", {256, 2, 1}, GgmlType::kQ4_K},
      {"blk.0.attn_norm.weight", {5}, GgmlType::kF16},
      {"blk.0.ffn_down.weight", {32, 1, 2, 2}, GgmlType::kQ4_0},
      {"output_norm.weight", {3}, GgmlType::kBF16},
      {"blk.0.ids", {1}, GgmlType::kI64},
  };
  for (const Tensor& t : tensors) {
    const std::string name = t.name;
    const Status status =
        writer.add_tensor(name, t.shape, t.type, [name](std::span<uint8_t> out) -> Status {
          const std::vector<uint8_t> bytes = sample_tensor_bytes(name, out.size());
          std::copy(bytes.begin(), bytes.end(), out.begin());
          return Status();
        });
    MET_CHECK(status.ok(), "{}", status.to_string());
  }
  return writer;
}

}  // namespace met::testing
