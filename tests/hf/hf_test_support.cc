// The hf/ tests' builders. See hf_test_support.h.
#include "hf_test_support.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "tensor/half.h"
#include "testing/random_data.h"

namespace met::testing {

std::vector<uint8_t> f32_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<uint8_t> f16_bytes(const std::vector<float>& values) {
  std::vector<uint16_t> halves;
  for (float v : values) halves.push_back(f32_to_fp16(v));
  std::vector<uint8_t> out(halves.size() * 2);
  std::memcpy(out.data(), halves.data(), out.size());
  return out;
}

std::vector<uint8_t> bf16_bytes(const std::vector<float>& values) {
  std::vector<uint16_t> halves;
  for (float v : values) halves.push_back(f32_to_bf16(v));
  std::vector<uint8_t> out(halves.size() * 2);
  std::memcpy(out.data(), halves.data(), out.size());
  return out;
}

std::string safetensors_header(const std::vector<FakeTensor>& tensors,
                               const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const FakeTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  return header.dump();
}

std::string safetensors_file(const std::string& header_json, const std::vector<FakeTensor>& tensors) {
  std::string header = header_json;
  while ((8 + header.size()) % 8 != 0) header += ' ';  // as the format pads it
  std::string out(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  out += header;
  for (const FakeTensor& t : tensors) out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  return out;
}

std::string safetensors_file(const std::vector<FakeTensor>& tensors,
                             const std::map<std::string, std::string>& metadata) {
  return safetensors_file(safetensors_header(tensors, metadata), tensors);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  MET_CHECK(out.good(), "cannot write {}", path);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

constexpr uint32_t kHidden = 16, kHeads = 2, kKvHeads = 1, kHeadDim = 8, kFfn = 32, kVocab = 10;

FakeTensor random_tensor(const std::string& name, std::vector<uint64_t> shape, const std::string& dtype,
                         std::mt19937_64& rng, bool norm = false) {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  met::testing::UniformFloat dist(-0.5f, 0.5f);
  std::vector<float> values(n);
  for (float& v : values) v = norm ? 1.0f + dist(rng) : dist(rng);
  std::vector<uint8_t> data = dtype == "F16" ? f16_bytes(values) : dtype == "BF16" ? bf16_bytes(values)
                                                                                    : f32_bytes(values);
  return {name, dtype, std::move(shape), std::move(data)};
}

}  // namespace

namespace {

std::vector<FakeTensor> tiny_bert_tensors(bool masked_lm) {
  std::mt19937_64 rng(11);
  const std::string b = masked_lm ? "bert." : "";
  std::vector<FakeTensor> t;
  t.push_back(random_tensor(b + "embeddings.word_embeddings.weight", {12, kHidden}, "F32", rng));
  t.push_back(random_tensor(b + "embeddings.position_embeddings.weight", {512, kHidden}, "F32", rng));
  t.push_back(random_tensor(b + "embeddings.token_type_embeddings.weight", {2, kHidden}, "F32", rng));
  t.push_back(random_tensor(b + "embeddings.LayerNorm.weight", {kHidden}, "F32", rng, true));
  t.push_back(random_tensor(b + "embeddings.LayerNorm.bias", {kHidden}, "F32", rng));
  for (int l = 0; l < 2; ++l) {
    const std::string p = fmt::format("{}encoder.layer.{}.", b, l);
    for (const char* m : {"attention.self.query", "attention.self.key", "attention.self.value",
                          "attention.output.dense"}) {
      t.push_back(random_tensor(p + m + ".weight", {kHidden, kHidden}, "F32", rng));
      t.push_back(random_tensor(p + m + ".bias", {kHidden}, "F32", rng));
    }
    t.push_back(random_tensor(p + "attention.output.LayerNorm.weight", {kHidden}, "F32", rng, true));
    t.push_back(random_tensor(p + "attention.output.LayerNorm.bias", {kHidden}, "F32", rng));
    t.push_back(random_tensor(p + "intermediate.dense.weight", {kFfn, kHidden}, "F32", rng));
    t.push_back(random_tensor(p + "intermediate.dense.bias", {kFfn}, "F32", rng));
    t.push_back(random_tensor(p + "output.dense.weight", {kHidden, kFfn}, "F32", rng));
    t.push_back(random_tensor(p + "output.dense.bias", {kHidden}, "F32", rng));
    t.push_back(random_tensor(p + "output.LayerNorm.weight", {kHidden}, "F32", rng, true));
    t.push_back(random_tensor(p + "output.LayerNorm.bias", {kHidden}, "F32", rng));
  }
  if (masked_lm) t.push_back(random_tensor("cls.predictions.bias", {12}, "F32", rng));
  t.push_back(random_tensor(b + "pooler.dense.weight", {kHidden, kHidden}, "F32", rng));
  return t;
}

std::string tiny_bert_tokenizer_json() {
  nlohmann::json added = nlohmann::json::array();
  const std::vector<std::string> special = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  nlohmann::json vocab = nlohmann::json::object();
  for (size_t i = 0; i < special.size(); ++i) {
    added.push_back({{"id", i}, {"content", special[i]}, {"special", true}});
    vocab[special[i]] = i;
  }
  int id = 5;
  for (const char* w : {"the", "cat", "sat", "##s", "a", "dog", "on"}) vocab[w] = id++;
  const nlohmann::json tok = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", {{"type", "BertNormalizer"}, {"lowercase", true}, {"strip_accents", nullptr}}},
      {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
      {"post_processor", {{"type", "BertProcessing"}, {"sep", {"[SEP]", 3}}, {"cls", {"[CLS]", 2}}}},
      {"model",
       {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"continuing_subword_prefix", "##"}, {"vocab", vocab}}}};
  return tok.dump();
}

}  // namespace

void write_tiny_bert_folder(const std::string& dir, bool masked_lm, const std::string& pooling_mode) {
  std::filesystem::create_directories(dir + "/1_Pooling");
  const nlohmann::json config = {{"architectures", {masked_lm ? "BertForMaskedLM" : "BertModel"}},
                                 {"model_type", "bert"},
                                 {"hidden_size", kHidden},
                                 {"num_hidden_layers", 2},
                                 {"num_attention_heads", 2},
                                 {"intermediate_size", kFfn},
                                 {"max_position_embeddings", 512},
                                 {"type_vocab_size", 2},
                                 {"vocab_size", 12},
                                 {"layer_norm_eps", 1e-12},
                                 {"hidden_act", "gelu"}};
  write_file(dir + "/config.json", config.dump());
  write_file(dir + "/tokenizer.json", tiny_bert_tokenizer_json());
  write_file(dir + "/tokenizer_config.json",
             R"({"unk_token": "[UNK]", "sep_token": "[SEP]", "cls_token": "[CLS]", "pad_token": "[PAD]",
                 "mask_token": "[MASK]"})");
  write_file(dir + "/model.safetensors", safetensors_file(tiny_bert_tensors(masked_lm)));
  write_file(dir + "/modules.json",
             R"([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}])");
  const nlohmann::json pooling = {{"word_embedding_dimension", kHidden}, {pooling_mode, true}};
  write_file(dir + "/1_Pooling/config.json", pooling.dump());
}

std::vector<FakeTensor> tiny_hf_tensors(const TinyHfModel& m) {
  std::mt19937_64 rng(m.seed);
  const std::string& d = m.dtype;
  std::vector<FakeTensor> t;
  if (!m.tied) t.push_back(random_tensor("model.embed_tokens.weight", {kVocab, kHidden}, d, rng));
  for (uint32_t l = 0; l < m.num_layers; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    t.push_back(random_tensor(p + "input_layernorm.weight", {kHidden}, d, rng, true));
    t.push_back(random_tensor(p + "self_attn.q_proj.weight", {kHeads * kHeadDim, kHidden}, d, rng));
    t.push_back(random_tensor(p + "self_attn.k_proj.weight", {kKvHeads * kHeadDim, kHidden}, d, rng));
    t.push_back(random_tensor(p + "self_attn.v_proj.weight", {kKvHeads * kHeadDim, kHidden}, d, rng));
    if (m.architecture == "Qwen2ForCausalLM") {
      t.push_back(random_tensor(p + "self_attn.q_proj.bias", {kHeads * kHeadDim}, d, rng));
      t.push_back(random_tensor(p + "self_attn.k_proj.bias", {kKvHeads * kHeadDim}, d, rng));
      t.push_back(random_tensor(p + "self_attn.v_proj.bias", {kKvHeads * kHeadDim}, d, rng));
    }
    if (m.architecture == "Qwen3ForCausalLM") {
      t.push_back(random_tensor(p + "self_attn.q_norm.weight", {kHeadDim}, d, rng, true));
      t.push_back(random_tensor(p + "self_attn.k_norm.weight", {kHeadDim}, d, rng, true));
    }
    t.push_back(random_tensor(p + "self_attn.o_proj.weight", {kHidden, kHeads * kHeadDim}, d, rng));
    t.push_back(random_tensor(p + "post_attention_layernorm.weight", {kHidden}, d, rng, true));
    t.push_back(random_tensor(p + "mlp.gate_proj.weight", {kFfn, kHidden}, d, rng));
    t.push_back(random_tensor(p + "mlp.up_proj.weight", {kFfn, kHidden}, d, rng));
    t.push_back(random_tensor(p + "mlp.down_proj.weight", {kHidden, kFfn}, d, rng));
  }
  t.push_back(random_tensor("model.norm.weight", {kHidden}, d, rng, true));
  t.push_back(random_tensor("lm_head.weight", {kVocab, kHidden}, d, rng));
  return t;
}

std::string tiny_hf_config(const TinyHfModel& m) {
  nlohmann::json c = {{"architectures", {m.architecture}},
                      {"hidden_size", kHidden},
                      {"intermediate_size", kFfn},
                      {"num_hidden_layers", m.num_layers},
                      {"num_attention_heads", kHeads},
                      {"num_key_value_heads", kKvHeads},
                      {"max_position_embeddings", 64},
                      {"rms_norm_eps", 1e-5},
                      {"rope_theta", 10000.0},
                      {"rope_scaling", nullptr},
                      {"tie_word_embeddings", m.tied},
                      {"vocab_size", kVocab}};
  return c.dump(2);
}

std::string tiny_hf_tokenizer_json() {
  const std::string s = "\xe2\x96\x81";  // ▁
  nlohmann::json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}, {s, 3},      {"a", 4},
                          {"b", 5},     {"c", 6},   {s + "a", 7}, {"ab", 8}, {s + "ab", 9}};
  nlohmann::json added = nlohmann::json::array();
  for (const auto& [text, id] : {std::pair<std::string, int>{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}}) {
    added.push_back({{"id", id}, {"content", text}, {"special", true}, {"normalized", false}});
  }
  nlohmann::json tok = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", s}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", s}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", s}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model",
       {{"type", "BPE"},
        {"unk_token", "<unk>"},
        {"fuse_unk", true},
        {"byte_fallback", true},
        {"vocab", vocab},
        {"merges", {s + " a", "a b", s + "a b"}}}}};
  return tok.dump(2);
}

void write_tiny_hf_folder(const std::string& dir, const TinyHfModel& m) {
  write_file(dir + "/config.json", tiny_hf_config(m));
  write_file(dir + "/tokenizer.json", tiny_hf_tokenizer_json());
  write_file(dir + "/tokenizer_config.json",
             R"({"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": true,
                 "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"})");
  std::map<std::string, std::string> metadata = {{"format", "pt"}};
  if (m.tied) metadata["model.embed_tokens.weight"] = "lm_head.weight";
  write_file(dir + "/model.safetensors", safetensors_file(tiny_hf_tensors(m), metadata));
}

std::vector<ExpectedRun> read_expected_runs(const std::string& jsonl_path) {
  std::vector<ExpectedRun> runs;
  std::istringstream lines(read_file(jsonl_path));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    ExpectedRun r;
    r.prompt = j["prompt"].get<std::string>();
    r.prompt_ids = j["prompt_ids"].get<std::vector<int32_t>>();
    r.output_ids = j["output_ids"].get<std::vector<int32_t>>();
    r.output_text = j["output_text"].get<std::string>();
    for (const auto& pair : j["top5_first"]) r.top5_first.emplace_back(pair[0].get<int32_t>(), pair[1].get<double>());
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace met::testing
