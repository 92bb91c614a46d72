// Tests for open_hf_folder / open_model_file (src/hf/hf_model.h), the
// weights it assembles (src/hf/hf_weights.h) and load_model
// (src/hf/model_loader.h): the shared TinyStories folder against
// expected.jsonl (greedy ids and first-step log-probs, on the folder and on
// its GGUF conversion; skipped with a message when ../shared is absent), and
// tiny folders written here for dtypes, ties, shards, families and every
// refused input.
#include "hf/hf_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numbers>

#include <nlohmann/json.hpp>

#include "hf/hf_tensor_names.h"
#include "hf/model_loader.h"
#include "hf_test_support.h"
#include "model/quantize_model.h"
#include "testing/http_client.h"
#include "testing/model_test_support.h"
#include "testing/reference_encoder.h"
#include "testing/run_command.h"
#include "testing/shared_data.h"
#include "testing/temp_dir.h"

namespace met {
namespace {

using ::testing::HasSubstr;

constexpr int32_t kBlocks = 8;  // 128 positions: the longest expected run is 9 + 48 tokens

// Logits after every token of `tokens` (prompt chunks of 4, then one per step).
std::vector<std::vector<float>> all_logits(const Model& model, const std::vector<TokenId>& tokens) {
  auto dev = testing::make_test_device(model, {.num_threads = 2, .num_kv_blocks = kBlocks});
  return testing::logits_at_every_position(*dev, tokens, static_cast<int32_t>(tokens.size()), 4,
                                           testing::block_range(0, kBlocks));
}

TokenId argmax(const std::vector<float>& logits) {  // ties to the lower id, as expected.jsonl's reference
  return static_cast<TokenId>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// Greedy decoding checked by teacher forcing: fed the prompt and the expected
// ids, the model's argmax after each position is the next expected id, so a
// greedy run would produce exactly output_ids; the first step's log-probs
// match top5_first within 1e-4.
void expect_reproduces(const Model& model, const testing::ExpectedRun& r) {
  std::vector<TokenId> tokens = r.prompt_ids;
  tokens.insert(tokens.end(), r.output_ids.begin(), r.output_ids.end() - 1);
  const std::vector<std::vector<float>> logits = all_logits(model, tokens);
  for (size_t k = 0; k < r.output_ids.size(); ++k) {
    EXPECT_EQ(argmax(logits[r.prompt_ids.size() - 1 + k]), r.output_ids[k]) << "'" << r.prompt << "' step " << k;
  }
  const std::vector<float>& first = logits[r.prompt_ids.size() - 1];
  const float max = *std::max_element(first.begin(), first.end());
  double sum = 0;
  for (float l : first) sum += std::exp(static_cast<double>(l) - max);
  for (const auto& [id, logprob] : r.top5_first) {
    EXPECT_NEAR(first[static_cast<size_t>(id)] - max - std::log(sum), logprob, 1e-4) << r.prompt << " id " << id;
  }
}

TEST(HfModel, TheTinyStoriesFolderOpensAsALlamaGguf) {
  MET_REQUIRE_SHARED(dir, "models/tinystories-656k-hf");
  Result<GgufFile> file = open_model_file(dir);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const GgufMetadata& md = file->metadata();
  EXPECT_EQ(*md.get_string("general.architecture"), "llama");
  EXPECT_EQ(*md.get_string("general.name"), "tinystories-656k-hf");
  EXPECT_EQ(*md.get_u32("general.file_type"), 0u);  // ALL_F32
  EXPECT_EQ(file->tensors().size(), 20u);  // 20 HF tensors: lm_head.weight becomes token_embd, no output
  const GgufTensorInfo* embd = file->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->shape, (std::vector<uint64_t>{128, 2048}));
  EXPECT_EQ(file->find_tensor("output.weight"), nullptr);  // tied
  ASSERT_NE(file->find_tensor("blk.1.attn_k.weight"), nullptr);
  EXPECT_EQ(file->find_tensor("blk.1.attn_k.weight")->shape, (std::vector<uint64_t>{128, 64}));
  Result<GgufFile> trailing_slash = open_model_file(dir + "/");
  ASSERT_TRUE(trailing_slash.ok()) << trailing_slash.status().to_string();
  EXPECT_EQ(*trailing_slash->metadata().get_string("general.name"), "tinystories-656k-hf");
}

TEST(HfModel, TheTinyStoriesFolderReproducesEveryExpectedGreedyRun) {
  MET_REQUIRE_SHARED(dir, "models/tinystories-656k-hf");
  Result<std::unique_ptr<Model>> model = load_model(dir);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  for (const testing::ExpectedRun& r : testing::read_expected_runs(dir + "/expected.jsonl")) {
    expect_reproduces(**model, r);
  }
}

TEST(HfModel, TheConvertedGgufHasTheSameBytesAndRuns) {
  MET_REQUIRE_SHARED(dir, "models/tinystories-656k-hf");
  testing::TempDir tmp;
  Result<GgufFile> folder = open_hf_folder(dir);
  ASSERT_TRUE(folder.ok()) << folder.status().to_string();
  ASSERT_TRUE(quantize_model(*folder, tmp.file("m.gguf"), nullptr, 2).ok());
  Result<GgufFile> gguf = GgufFile::open(tmp.file("m.gguf"));
  ASSERT_TRUE(gguf.ok()) << gguf.status().to_string();
  EXPECT_EQ(gguf->metadata().entries(), folder->metadata().entries());
  ASSERT_EQ(gguf->tensors().size(), folder->tensors().size());
  for (const GgufTensorInfo& t : folder->tensors()) {
    const GgufTensorInfo* c = gguf->find_tensor(t.name);
    ASSERT_NE(c, nullptr) << t.name;
    EXPECT_EQ(c->shape, t.shape);
    EXPECT_EQ(c->type, t.type);
    const auto a = folder->tensor_data(t), b = gguf->tensor_data(*c);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << t.name;
  }
  Result<std::unique_ptr<Model>> model = load_model(tmp.file("m.gguf"));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  for (const testing::ExpectedRun& r : testing::read_expected_runs(dir + "/expected.jsonl")) {
    expect_reproduces(**model, r);
  }
}

// Tiny folders: no ../shared needed.

std::vector<std::vector<float>> tiny_logits(const std::string& path) {
  Result<std::unique_ptr<Model>> model = load_model(path);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return {};
  return all_logits(**model, {1, 7, 3, 5, 9, 8, 4});
}

TEST(HfModel, ATinyFolderRunsAsItsConvertedGguf) {
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    testing::TempDir tmp;
    testing::write_tiny_hf_folder(tmp.path(), {.num_layers = 2, .dtype = dtype});
    Result<GgufFile> folder = open_hf_folder(tmp.path());
    ASSERT_TRUE(folder.ok()) << folder.status().to_string();
    const GgmlType expected = std::string(dtype) == "F32" ? GgmlType::kF32
                              : std::string(dtype) == "F16" ? GgmlType::kF16 : GgmlType::kBF16;
    EXPECT_EQ(folder->find_tensor("blk.1.ffn_down.weight")->type, expected) << dtype;
    ASSERT_TRUE(quantize_model(*folder, tmp.file("m.gguf"), nullptr, 1).ok());
    const auto from_folder = tiny_logits(tmp.path());
    ASSERT_EQ(from_folder.size(), 7u);
    EXPECT_EQ(from_folder, tiny_logits(tmp.file("m.gguf"))) << dtype;  // the same bits
  }
}

TEST(HfModel, LlamaQkRowsArePermutedAndQwenRowsAreNot) {
  for (const char* arch : {"LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"}) {
    testing::TempDir tmp;
    const testing::TinyHfModel m{.architecture = arch};
    testing::write_tiny_hf_folder(tmp.path(), m);
    Result<GgufFile> folder = open_hf_folder(tmp.path());
    ASSERT_TRUE(folder.ok()) << arch << ": " << folder.status().to_string();
    const std::vector<testing::FakeTensor> hf = testing::tiny_hf_tensors(m);
    const auto k = std::find_if(hf.begin(), hf.end(), [](const auto& t) {
      return t.name == "model.layers.0.self_attn.k_proj.weight";
    });
    const std::span<const uint8_t> got = folder->tensor_data(*folder->find_tensor("blk.0.attn_k.weight"));
    const std::vector<uint8_t> want = std::string(arch) == "LlamaForCausalLM"
                                          ? permute_rope_rows(k->data, k->shape[0], k->shape[1] * 4, 1)
                                          : k->data;
    EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin(), want.end())) << arch;
    Result<std::unique_ptr<Model>> model = load_model(tmp.path());
    EXPECT_TRUE(model.ok()) << arch << ": " << model.status().to_string();
  }
}

TEST(HfModel, TiedEmbeddingsStoredAsLmHeadAloneBecomeTokenEmbd) {
  testing::TempDir tmp;
  testing::write_tiny_hf_folder(tmp.path(), {.tied = true});
  Result<GgufFile> folder = open_hf_folder(tmp.path());
  ASSERT_TRUE(folder.ok()) << folder.status().to_string();
  ASSERT_NE(folder->find_tensor("token_embd.weight"), nullptr);
  EXPECT_EQ(folder->find_tensor("output.weight"), nullptr);
  EXPECT_EQ(tiny_logits(tmp.path()).size(), 7u);
}

TEST(HfModel, ShardsListedByTheIndexLoadAsOneFile) {
  testing::TempDir one, sharded;
  testing::write_tiny_hf_folder(one.path(), {.num_layers = 2});
  testing::write_tiny_hf_folder(sharded.path(), {.num_layers = 2});
  std::filesystem::remove(sharded.file("model.safetensors"));
  const std::vector<testing::FakeTensor> all = testing::tiny_hf_tensors({.num_layers = 2});
  const std::vector<testing::FakeTensor> first(all.begin(), all.begin() + 7), second(all.begin() + 7, all.end());
  testing::write_file(sharded.file("model-00001-of-00002.safetensors"), testing::safetensors_file(first));
  testing::write_file(sharded.file("model-00002-of-00002.safetensors"), testing::safetensors_file(second));
  nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  for (const auto& t : first) index["weight_map"][t.name] = "model-00001-of-00002.safetensors";
  for (const auto& t : second) index["weight_map"][t.name] = "model-00002-of-00002.safetensors";
  testing::write_file(sharded.file("model.safetensors.index.json"), index.dump());
  EXPECT_EQ(tiny_logits(sharded.path()), tiny_logits(one.path()));
}

TEST(HfModel, TensorsAtUnalignedOffsetsAreCopiedAndRunTheSame) {
  testing::TempDir aligned, unaligned;
  testing::write_tiny_hf_folder(aligned.path());
  testing::write_tiny_hf_folder(unaligned.path());
  const std::vector<testing::FakeTensor> tensors = testing::tiny_hf_tensors({});
  std::string header = testing::safetensors_header(tensors);
  while ((8 + header.size()) % 4 != 2) header += ' ';  // every F32 tensor 2 bytes off a 4-byte boundary
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(header.size() >> (8 * i));
  bytes += header;
  for (const auto& t : tensors) bytes.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
  testing::write_file(unaligned.file("model.safetensors"), bytes);
  const auto expected = tiny_logits(aligned.path());
  ASSERT_EQ(expected.size(), 7u);
  EXPECT_EQ(tiny_logits(unaligned.path()), expected);
}

TEST(HfModel, Llama3RopeScalingAddsRopeFreqs) {
  testing::TempDir tmp;
  testing::write_tiny_hf_folder(tmp.path());
  nlohmann::json config = nlohmann::json::parse(testing::read_file(tmp.file("config.json")));
  config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                            {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 16}};
  testing::write_file(tmp.file("config.json"), config.dump());
  Result<GgufFile> folder = open_hf_folder(tmp.path());
  ASSERT_TRUE(folder.ok()) << folder.status().to_string();
  const GgufTensorInfo* freqs = folder->find_tensor("rope_freqs.weight");
  ASSERT_NE(freqs, nullptr);
  ASSERT_EQ(freqs->shape, (std::vector<uint64_t>{4}));  // head_dim 8: 4 pairs
  std::vector<float> got(4);
  std::memcpy(got.data(), folder->tensor_data(*freqs).data(), 16);
  // convert_hf_to_gguf.py's formula: wavelengths below 16 / 4 keep 1, above 16 / 1 get 8, between blend.
  for (int i = 0; i < 4; ++i) {
    const double wavelength = 2 * std::numbers::pi * std::pow(10000.0, 2.0 * i / 8);
    double want = 1;
    if (wavelength > 16) {
      want = 8;
    } else if (wavelength >= 4) {
      const double smooth = (16 / wavelength - 1) / 3;
      want = 1 / ((1 - smooth) / 8 + smooth);
    }
    EXPECT_NEAR(got[static_cast<size_t>(i)], want, 1e-5) << i;
  }
}

TEST(HfModel, GenerationConfigAndChatTemplateBecomeMetadata) {
  testing::TempDir tmp;
  testing::write_tiny_hf_folder(tmp.path());
  testing::write_file(tmp.file("generation_config.json"), R"({"temperature": 0.7, "top_k": 30})");
  Result<GgufFile> folder = open_hf_folder(tmp.path());
  ASSERT_TRUE(folder.ok()) << folder.status().to_string();
  EXPECT_FLOAT_EQ(*folder->metadata().get_f32("general.sampling.temp"), 0.7f);
  EXPECT_EQ(*folder->metadata().get_i64("general.sampling.top_k"), 30);
  EXPECT_THAT(*folder->metadata().get_string("tokenizer.chat_template"), HasSubstr("m['content']"));
  testing::write_file(tmp.file("chat_template.jinja"), "J");
  folder = open_hf_folder(tmp.path());
  ASSERT_TRUE(folder.ok()) << folder.status().to_string();
  EXPECT_EQ(*folder->metadata().get_string("tokenizer.chat_template"), "J");  // the file wins
}

// A tiny folder with one change, and what opening it must say.
struct BadFolder {
  const char* what;
  std::function<void(const testing::TempDir&)> spoil;
  const char* message;
};

void replace_safetensors(const testing::TempDir& dir, const std::function<void(std::vector<testing::FakeTensor>&)>& f) {
  std::vector<testing::FakeTensor> tensors = testing::tiny_hf_tensors({});
  f(tensors);
  testing::write_file(dir.file("model.safetensors"), testing::safetensors_file(tensors));
}

std::vector<BadFolder> bad_folders() {
  return {
      {"no config.json", [](const auto& d) { std::filesystem::remove(d.file("config.json")); },
       "config.json is missing"},
      {"no tokenizer.json", [](const auto& d) { std::filesystem::remove(d.file("tokenizer.json")); },
       "tokenizer.json is missing"},
      {"no safetensors", [](const auto& d) { std::filesystem::remove(d.file("model.safetensors")); },
       "no model.safetensors or model.safetensors.index.json"},
      {"corrupt header", [](const auto& d) { testing::write_file(d.file("model.safetensors"), "abc"); },
       "model.safetensors: 3 bytes is too short"},
      {"header not JSON",
       [](const auto& d) { testing::write_file(d.file("model.safetensors"), testing::safetensors_file("{oops", {})); },
       "model.safetensors: header is not a JSON object"},
      {"offsets past the end",
       [](const auto& d) {
         std::string bytes = testing::safetensors_file(testing::tiny_hf_tensors({}));
         testing::write_file(d.file("model.safetensors"), bytes.substr(0, bytes.size() - 4));
       },
       "model.safetensors: tensor 'lm_head.weight': data_offsets"},
      {"unknown dtype",
       [](const auto& d) { replace_safetensors(d, [](auto& t) { t[1].dtype = "I32"; }); },
       "model.safetensors: tensor 'model.layers.0.input_layernorm.weight' is I32; met loads F32, F16 and BF16"},
      {"missing tensor",
       [](const auto& d) {
         replace_safetensors(d, [](auto& t) {
           std::erase_if(t, [](const auto& x) { return x.name == "model.layers.0.mlp.down_proj.weight"; });
         });
       },
       "tensor 'model.layers.0.mlp.down_proj.weight' is missing"},
      {"missing embeddings",
       [](const auto& d) { replace_safetensors(d, [](auto& t) { t.erase(t.begin()); }); },
       "tensor 'model.embed_tokens.weight' is missing"},
      {"unknown tensor",
       [](const auto& d) {
         replace_safetensors(d, [](auto& t) { t.push_back({"model.vision.proj", "F32", {1}, {0, 0, 0, 0}}); });
       },
       "tensor 'model.vision.proj' is not a tensor of LlamaForCausalLM"},
      {"unsupported architecture",
       [](const auto& d) {
         testing::write_file(d.file("config.json"), testing::tiny_hf_config({.architecture = "GemmaForCausalLM"}));
       },
       "config.json: architectures [\"GemmaForCausalLM\"] is not supported"},
      {"index names a missing shard",
       [](const auto& d) {
         testing::write_file(d.file("model.safetensors.index.json"),
                             R"({"weight_map": {"model.norm.weight": "model-00002-of-00002.safetensors"}})");
       },
       "model-00002-of-00002.safetensors (for 'model.norm.weight'), which is missing"},
  };
}

TEST(HfModel, BadFoldersAreRefusedNamingTheFileKeyOrTensor) {
  for (const BadFolder& b : bad_folders()) {
    testing::TempDir tmp;
    testing::write_tiny_hf_folder(tmp.path());
    b.spoil(tmp);
    Result<GgufFile> folder = open_model_file(tmp.path());
    ASSERT_FALSE(folder.ok()) << b.what;
    EXPECT_THAT(folder.status().message(), HasSubstr(b.message)) << b.what;
    EXPECT_THAT(folder.status().message(), HasSubstr(tmp.path())) << b.what;
  }
}

TEST(HfModel, AFileGoesThroughTheGgufReader) {
  Result<GgufFile> file = open_model_file("/nonexistent/model.gguf");
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("/nonexistent/model.gguf"));
}

}  // namespace
}  // namespace met

namespace met {
namespace {

// The tiny BERT folder's CLS embedding of `text` on a CpuDevice, and the
// double-precision reference's on the same model.
void expect_bert_folder_matches_reference(const std::string& dir, const std::string& text) {
  Result<GgufFile> file = open_hf_folder(dir);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  Result<std::unique_ptr<Model>> model = Model::from_file(std::move(*file));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  ASSERT_EQ((*model)->arch(), Arch::kBert);
  const ModelHParams& hp = (*model)->hparams();
  EXPECT_FALSE(hp.causal_attention);
  EXPECT_EQ(hp.pooling, Pooling::kCls);
  EXPECT_EQ(hp.token_type_count, 2u);
  Result<Tokenizer> tok = Tokenizer::from_gguf((*model)->file().metadata());
  ASSERT_TRUE(tok.ok()) << tok.status().to_string();
  const std::vector<TokenId> ids = tok->encode(text, EncodeOptions{.add_special = true, .parse_special = false});
  EXPECT_EQ(ids, (std::vector<TokenId>{2, 5, 6, 7, 8, 9, 10, 3})) << "[CLS] the cat sat ##s a dog [SEP]";
  auto dev = testing::make_test_device(**model);
  StepPlan plan;
  for (size_t i = 0; i < ids.size(); ++i) {
    plan.inputs.push_back(FeedToken{ids[i]});
    plan.positions.push_back(static_cast<int32_t>(i));
  }
  plan.seqs.push_back(StepSeq{0, static_cast<int32_t>(ids.size()), 0, testing::block_range(0, 1), std::nullopt});
  plan.outputs.push_back(OutputRow{0, OutputKind::kHidden});
  const StepResult r = testing::run_step(*dev, plan);
  const testing::Rows want = testing::ReferenceEncoder(**model).hidden(ids);
  EXPECT_LT(testing::relative_error(want[0], r.hidden), 1e-4);
}

TEST(HfModel, ASentenceTransformersBertFolderEmbedsAsTheReference) {
  testing::TempDir dir;
  testing::write_tiny_bert_folder(dir.path(), /*masked_lm=*/false, "pooling_mode_cls_token");
  expect_bert_folder_matches_reference(dir.path(), "The cat sats a dog");
  testing::TempDir mlm;
  testing::write_tiny_bert_folder(mlm.path(), /*masked_lm=*/true, "pooling_mode_cls_token");
  expect_bert_folder_matches_reference(mlm.path(), "the CAT sats a dog");
}

TEST(HfModel, MetServesABertFolderOnTheEmbeddingsEndpoint) {
  testing::TempDir dir;
  const std::string folder = dir.file("bge-tiny");
  testing::write_tiny_bert_folder(folder, /*masked_lm=*/false, "pooling_mode_mean_tokens");
  const auto info = testing::run_command(testing::met_binary() + " info --json " + testing::shell_quote(folder));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const nlohmann::json j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["architecture"], "bert");
  EXPECT_EQ(j["hparams"]["pooling"], "mean");
  testing::ServeProcess server(testing::shell_quote(folder) + " --port 0 --threads 1");
  ASSERT_NE(server.port(), 0) << server.error();
  const auto r = testing::http_call(server.port(), "POST", "/v1/embeddings",
                                    R"({"input": ["the cat sat", "a dog"], "model": "bge-tiny"})");
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->status, 200) << r->body;
  const nlohmann::json e = nlohmann::json::parse(r->body);
  ASSERT_EQ(e["data"].size(), 2u);
  EXPECT_EQ(e["data"][0]["embedding"].size(), 16u);
  EXPECT_EQ(e["usage"]["prompt_tokens"], 9) << "[CLS] the cat sat [SEP], [CLS] a dog [SEP]";
}

TEST(HfModel, APoolingMetCannotRunIsRefusedNamingIt) {
  testing::TempDir dir;
  testing::write_tiny_bert_folder(dir.path(), false, "pooling_mode_max_tokens");
  const Result<GgufFile> file = open_hf_folder(dir.path());
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr("pooling_mode_max_tokens"));
  testing::TempDir mean;
  testing::write_tiny_bert_folder(mean.path(), false, "pooling_mode_mean_tokens");
  const Result<GgufFile> ok = open_hf_folder(mean.path());
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(*ok->metadata().get_u32("bert.pooling_type"), 1u);
}

}  // namespace
}  // namespace met
