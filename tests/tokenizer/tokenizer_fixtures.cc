// Tokenizer test fixtures.
#include "tokenizer/tokenizer_fixtures.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <queue>
#include <sstream>

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include <fmt/format.h>

namespace met::testing {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<Tokenizer> load_tokenizer(const std::string& gguf_path) {
  MET_ASSIGN_OR_RETURN(GgufFile file, GgufFile::open(gguf_path));
  return Tokenizer::from_gguf(file.metadata());
}

std::vector<std::string> load_vector_inputs(const std::string& inp_path) {
  const std::string text = read_file(inp_path);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> inputs;
  size_t pos = 0;
  for (size_t at = text.find(sep); at != std::string::npos; at = text.find(sep, pos)) {
    inputs.push_back(text.substr(pos, at - pos));
    pos = at + sep.size();
  }
  if (pos < text.size()) inputs.push_back(text.substr(pos));
  return inputs;
}

std::vector<VectorCase> load_vector_cases(const std::string& gguf_path) {
  const std::vector<std::string> inputs = load_vector_inputs(gguf_path + ".inp");
  std::istringstream out(read_file(gguf_path + ".out"));
  std::vector<VectorCase> cases;
  std::string line;
  for (const std::string& input : inputs) {
    if (!std::getline(out, line)) break;
    VectorCase c{input, {}};
    std::istringstream ids(line);
    for (TokenId id; ids >> id;) c.expected.push_back(id);
    cases.push_back(std::move(c));
  }
  return cases;
}

GgufMetadata tiny_metadata(const TinyVocab& vocab) {
  GgufMetadata md;
  md.set("general.architecture", std::string("llama"));
  md.set("tokenizer.ggml.model", vocab.model);
  if (!vocab.pre.empty()) md.set("tokenizer.ggml.pre", vocab.pre);
  md.set("tokenizer.ggml.tokens", GgufValue::array(vocab.tokens));
  if (!vocab.scores.empty()) md.set("tokenizer.ggml.scores", GgufValue::array(vocab.scores));
  if (!vocab.types.empty()) md.set("tokenizer.ggml.token_type", GgufValue::array(vocab.types));
  if (!vocab.merges.empty() || vocab.model == "gpt2") md.set("tokenizer.ggml.merges", GgufValue::array(vocab.merges));
  for (const auto& [key, value] : vocab.extra) md.set(key, value);
  return md;
}

Vocab tiny_vocab(const TinyVocab& v) {
  Result<Vocab> vocab = Vocab::from_gguf(tiny_metadata(v));
  EXPECT_TRUE(vocab.ok()) << vocab.status().to_string();
  return std::move(vocab).value();
}

Tokenizer tiny_tokenizer(const TinyVocab& vocab) {
  Result<Tokenizer> tokenizer = Tokenizer::from_gguf(tiny_metadata(vocab));
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().to_string();
  return std::move(tokenizer).value();
}

TinyVocab tiny_spm(const std::vector<std::string>& pieces) {
  TinyVocab v;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {2, 3, 3};
  v.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(fmt::format("<0x{:02X}>", b));
    v.types.push_back(6);
    v.scores.push_back(0);
  }
  for (size_t i = 0; i < pieces.size(); ++i) {
    v.tokens.push_back(pieces[i]);
    v.types.push_back(1);
    v.scores.push_back(-static_cast<float>(i + 1));
  }
  return v;
}

TinyVocab tiny_bpe(const std::vector<std::string>& merges, const std::vector<std::string>& extra_tokens,
                   const std::string& pre) {
  TinyVocab v;
  v.model = "gpt2";
  v.pre = pre;
  v.tokens = byte_level_symbols();
  for (const std::string& merge : merges) {
    const size_t space = merge.find(' ', 1);
    v.tokens.push_back(merge.substr(0, space) + merge.substr(space + 1));
  }
  v.tokens.insert(v.tokens.end(), extra_tokens.begin(), extra_tokens.end());
  v.merges = merges;
  v.extra.emplace_back("tokenizer.ggml.bos_token_id", GgufValue(uint32_t{0}));
  v.extra.emplace_back("tokenizer.ggml.eos_token_id", GgufValue(uint32_t{0}));
  return v;
}

TinyVocab tiny_ugm(const std::vector<std::pair<std::string, float>>& pieces) {
  TinyVocab v;
  v.model = "t5";
  v.tokens = {"<pad>", "</s>", "<unk>"};
  v.types = {3, 3, 2};
  v.scores = {0, 0, 0};
  for (const auto& [text, score] : pieces) {
    v.tokens.push_back(text);
    v.types.push_back(1);
    v.scores.push_back(score);
  }
  v.extra.emplace_back("tokenizer.ggml.add_space_prefix", GgufValue(false));
  v.extra.emplace_back("tokenizer.ggml.add_eos_token", GgufValue(false));
  return v;
}

namespace {

struct CharsmapTrieNode {
  std::map<uint8_t, std::unique_ptr<CharsmapTrieNode>> children;
  std::optional<uint32_t> replacement_offset;
};

void put_le32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Places each node's children (and its NUL value child) at index ^ offset ^
// label, the first offset whose slots are all free, breadth first.
std::vector<uint32_t> charsmap_units(const CharsmapTrieNode& root) {
  std::vector<uint32_t> units(1, 0);
  std::vector<bool> used(1, true);
  std::queue<std::pair<const CharsmapTrieNode*, uint32_t>> pending;
  pending.push({&root, 0});
  while (!pending.empty()) {
    const CharsmapTrieNode* node = pending.front().first;
    const uint32_t index = pending.front().second;
    pending.pop();
    std::vector<uint32_t> labels;
    if (node->replacement_offset) labels.push_back(0);
    for (const auto& child : node->children) labels.push_back(child.first);
    if (labels.empty()) continue;
    uint32_t offset = 1;
    const auto slot = [&](uint32_t label) { return index ^ offset ^ label; };
    const auto is_free = [&](uint32_t label) {
      return slot(label) != 0 && (slot(label) >= used.size() || !used[slot(label)]);
    };
    while (!std::all_of(labels.begin(), labels.end(), is_free)) ++offset;
    units[index] |= offset << 10;
    for (uint32_t label : labels) {
      if (slot(label) >= units.size()) {
        units.resize(slot(label) + 1, 0);
        used.resize(slot(label) + 1, false);
      }
      used[slot(label)] = true;
    }
    if (node->replacement_offset) units[slot(0)] = (1u << 31) | *node->replacement_offset;
    for (const auto& [label, child] : node->children) {
      units[slot(label)] = label | (child->replacement_offset ? 1u << 8 : 0u);
      pending.push({child.get(), slot(label)});
    }
  }
  return units;
}

}  // namespace

std::vector<uint8_t> tiny_charsmap(const std::vector<std::pair<std::string, std::string>>& rules) {
  CharsmapTrieNode root;
  std::string replacements;
  for (const auto& [from, to] : rules) {
    CharsmapTrieNode* node = &root;
    for (const char c : from) {
      auto& child = node->children[static_cast<uint8_t>(c)];
      if (!child) child = std::make_unique<CharsmapTrieNode>();
      node = child.get();
    }
    node->replacement_offset = static_cast<uint32_t>(replacements.size());
    replacements.append(to);
    replacements.push_back('\0');
  }
  const std::vector<uint32_t> units = charsmap_units(root);
  std::vector<uint8_t> blob;
  put_le32(blob, static_cast<uint32_t>(units.size() * 4));
  for (const uint32_t unit : units) put_le32(blob, unit);
  blob.insert(blob.end(), replacements.begin(), replacements.end());
  return blob;
}

GgufValue charsmap_value(std::vector<uint8_t> blob) { return GgufArray{GgufType::kUint8, std::move(blob)}; }

Tokenizer synthetic_tokenizer(VocabKind kind, uint32_t size, uint64_t seed) {
  SyntheticVocabOptions options;
  options.kind = kind;
  options.size = size;
  options.seed = seed;
  Result<SyntheticVocab> vocab = make_synthetic_vocab(options);
  EXPECT_TRUE(vocab.ok()) << vocab.status().to_string();
  GgufMetadata md;
  md.set("general.architecture", std::string("llama"));
  write_vocab_metadata(vocab.value(), md);
  Result<Tokenizer> tokenizer = Tokenizer::from_gguf(md);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().to_string();
  return std::move(tokenizer).value();
}

}  // namespace met::testing
