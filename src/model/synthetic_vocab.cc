// Synthetic vocabularies for make-model. Tested by tests/model/synthetic_vocab_test.cc.
#include "model/synthetic_vocab.h"

#include <algorithm>

#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "model/vocab_corpus.h"

namespace met {
namespace {

constexpr std::string_view kSpmSpace = "\xe2\x96\x81";  // U+2581 "▁"
constexpr uint32_t kMaxPieceBytes = 16;

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string utf8_encode(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// Bytes in GPT-2's vocabulary order: the printable ones first, then the rest.
std::vector<uint8_t> byte_level_order() {
  std::vector<uint8_t> order;
  std::vector<bool> printable(256, false);
  for (int b = 0; b < 256; ++b) {
    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) {
      printable[b] = true;
      order.push_back(static_cast<uint8_t>(b));
    }
  }
  for (int b = 0; b < 256; ++b) {
    if (!printable[b]) order.push_back(static_cast<uint8_t>(b));
  }
  return order;
}

// Grows a piece list by merges: first learned from text, then random.
class PieceBuilder {
 public:
  explicit PieceBuilder(std::vector<std::string> base) {
    for (auto& s : base) add_piece(std::move(s));
  }

  size_t size() const { return pieces_.size(); }
  const std::vector<std::string>& pieces() const { return pieces_; }
  const std::vector<std::pair<int, int>>& merges() const { return merges_; }
  std::optional<int> find(const std::string& s) const {
    auto it = index_.find(s);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  // Learns merges over `words` (each a list of piece ids, with a count) until
  // `target` pieces or no pair occurs twice.
  void learn(std::vector<std::pair<std::vector<int>, int>> words, size_t target) {
    while (pieces_.size() < target) {
      std::map<std::pair<int, int>, int> counts;
      for (const auto& [syms, n] : words) {
        for (size_t i = 0; i + 1 < syms.size(); ++i) counts[{syms[i], syms[i + 1]}] += n;
      }
      std::pair<int, int> best{-1, -1};
      int best_count = 1;
      for (const auto& [pair, n] : counts) {
        if (n > best_count) best = pair, best_count = n;
      }
      if (best.first < 0) return;
      const int merged = add_merge(best.first, best.second);
      for (auto& [syms, n] : words) apply(syms, best, merged);
    }
  }

  // Adds random merges of existing pieces until `target`; `space` may only
  // start a piece. Returns false if it cannot get there.
  bool fill_random(size_t target, uint64_t seed, std::string_view space) {
    uint64_t state = seed;
    const size_t max_attempts = 100 * target + 1000;
    for (size_t attempt = 0; pieces_.size() < target && attempt < max_attempts; ++attempt) {
      const int a = static_cast<int>(splitmix64(state) % pieces_.size());
      const int b = static_cast<int>(splitmix64(state) % pieces_.size());
      const std::string joined = pieces_[a] + pieces_[b];
      if (joined.size() > kMaxPieceBytes || pieces_[b].starts_with(space)) continue;
      if (index_.contains(joined)) continue;
      add_merge(a, b);
    }
    return pieces_.size() >= target;
  }

 private:
  int add_piece(std::string s) {
    const int id = static_cast<int>(pieces_.size());
    index_.emplace(s, id);
    pieces_.push_back(std::move(s));
    return id;
  }
  int add_merge(int a, int b) {
    merges_.emplace_back(a, b);
    return add_piece(pieces_[a] + pieces_[b]);
  }
  static void apply(std::vector<int>& syms, std::pair<int, int> pair, int merged) {
    std::vector<int> out;
    out.reserve(syms.size());
    for (size_t i = 0; i < syms.size(); ++i) {
      if (i + 1 < syms.size() && syms[i] == pair.first && syms[i + 1] == pair.second) {
        out.push_back(merged);
        ++i;
      } else {
        out.push_back(syms[i]);
      }
    }
    syms = std::move(out);
  }

  std::vector<std::string> pieces_;
  std::unordered_map<std::string, int> index_;
  std::vector<std::pair<int, int>> merges_;
};

// The training text as words (a space symbol then the word's symbols).
std::vector<std::pair<std::vector<int>, int>> corpus_words(const PieceBuilder& pb, VocabKind kind) {
  std::map<std::string, int> word_counts;
  std::string_view text = vocab_training_text();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    if (end > pos) word_counts[std::string(text.substr(pos, end - pos))]++;
    pos = end + 1;
  }
  std::vector<std::pair<std::vector<int>, int>> words;
  const auto& bytes = byte_level_symbols();
  for (const auto& [word, n] : word_counts) {
    std::vector<int> syms;
    const std::string space = kind == VocabKind::kSpm ? std::string(kSpmSpace) : bytes[' '];
    syms.push_back(*pb.find(space));
    for (unsigned char c : word) {
      const std::string sym = kind == VocabKind::kSpm ? std::string(1, static_cast<char>(c)) : bytes[c];
      syms.push_back(*pb.find(sym));
    }
    words.emplace_back(std::move(syms), n);
  }
  return words;
}

std::vector<std::string> base_pieces(VocabKind kind) {
  std::vector<std::string> base;
  if (kind == VocabKind::kSpm) {
    base.emplace_back(kSpmSpace);
    for (char c = '!'; c <= '~'; ++c) base.emplace_back(1, c);
  } else {
    for (uint8_t b : byte_level_order()) base.push_back(byte_level_symbols()[b]);
  }
  return base;
}

void append(SyntheticVocab& v, std::string token, TokenKind type, float score) {
  v.tokens.push_back(std::move(token));
  v.token_types.push_back(static_cast<int32_t>(type));
  if (v.kind == VocabKind::kSpm) v.scores.push_back(score);
}

// options.control_tokens without duplicates and without the tokens every
// synthetic vocab of its kind has.
std::vector<std::string> extra_control_tokens(const SyntheticVocabOptions& options) {
  const std::vector<std::string> built_in = options.kind == VocabKind::kSpm
                                                ? std::vector<std::string>{"<unk>", "<s>", "</s>", "<|im_start|>",
                                                                           "<|im_end|>"}
                                                : std::vector<std::string>{"<|endoftext|>", "<|im_start|>",
                                                                           "<|im_end|>"};
  std::vector<std::string> extra;
  for (const std::string& token : options.control_tokens) {
    if (token.empty() || std::find(built_in.begin(), built_in.end(), token) != built_in.end() ||
        std::find(extra.begin(), extra.end(), token) != extra.end()) {
      continue;
    }
    extra.push_back(token);
  }
  return extra;
}

}  // namespace

const std::vector<std::string>& byte_level_symbols() {
  static const std::vector<std::string> symbols = [] {
    std::vector<std::string> s(256);
    uint32_t next = 256;
    for (uint8_t b : byte_level_order()) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      s[b] = utf8_encode(printable ? b : next++);
    }
    return s;
  }();
  return symbols;
}

Result<SyntheticVocab> make_synthetic_vocab(const SyntheticVocabOptions& options) {
  if (options.size < kMinSyntheticVocab) {
    return invalid_argument("vocab size {} is below the minimum of {}", options.size,
                            kMinSyntheticVocab);
  }
  const VocabKind kind = options.kind;
  const std::vector<std::string> extra = extra_control_tokens(options);
  const size_t num_special = (kind == VocabKind::kSpm ? 3 + 256 + 2 : 3) + extra.size();
  const size_t num_base = base_pieces(kind).size();
  if (options.size < num_special + num_base) {
    return invalid_argument("vocab size {} leaves no room for {} control tokens", options.size, extra.size());
  }
  const size_t num_pieces = options.size - num_special;
  PieceBuilder pb(base_pieces(kind));
  pb.learn(corpus_words(pb, kind), num_pieces);
  const std::string_view space = kind == VocabKind::kSpm ? kSpmSpace : byte_level_symbols()[' '];
  if (!pb.fill_random(num_pieces, options.seed ^ 0x766f636162ull, space)) {
    return internal_error("could not build {} distinct pieces", num_pieces);
  }

  SyntheticVocab v;
  v.kind = kind;
  if (kind == VocabKind::kSpm) {
    append(v, "<unk>", TokenKind::kUnknown, 0.0f);
    append(v, "<s>", TokenKind::kControl, 0.0f);
    append(v, "</s>", TokenKind::kControl, 0.0f);
    for (int b = 0; b < 256; ++b) append(v, fmt::format("<0x{:02X}>", b), TokenKind::kByte, 0.0f);
    for (size_t i = 0; i < pb.size(); ++i) {
      append(v, pb.pieces()[i], TokenKind::kNormal, -static_cast<float>(i));
    }
    v.unk_id = 0, v.bos_id = 1, v.eos_id = 2;
    v.add_bos = true;
  } else {
    v.pre = options.bpe_pre;
    for (const auto& p : pb.pieces()) append(v, p, TokenKind::kNormal, 0.0f);
    for (const auto& [a, b] : pb.merges()) v.merges.push_back(pb.pieces()[a] + " " + pb.pieces()[b]);
    v.bos_id = v.eos_id = static_cast<uint32_t>(v.tokens.size());
    append(v, "<|endoftext|>", TokenKind::kControl, 0.0f);
  }
  append(v, "<|im_start|>", TokenKind::kControl, 0.0f);
  v.eot_id = static_cast<uint32_t>(v.tokens.size());
  append(v, "<|im_end|>", TokenKind::kControl, 0.0f);
  for (const std::string& token : extra) {
    if (std::find(v.tokens.begin(), v.tokens.end(), token) != v.tokens.end()) {
      return internal_error("control token '{}' is also a learned piece", token);
    }
    append(v, token, TokenKind::kControl, 0.0f);
  }
  return v;
}

SyntheticVocab as_wordpiece(SyntheticVocab spm) {
  spm.tokens[spm.unk_id] = "[UNK]";
  spm.tokens[spm.bos_id] = "[CLS]";
  spm.tokens[spm.eos_id] = "[SEP]";
  // WordPiece has no byte fallback (llama.cpp aborts on a BYTE token in one):
  // the <0xNN> pieces stay as unused ids, like BERT's [unused] ones.
  for (int32_t& type : spm.token_types) {
    if (type == static_cast<int32_t>(TokenKind::kByte)) type = static_cast<int32_t>(TokenKind::kUnused);
  }
  spm.wordpiece = true;
  return spm;
}

void write_vocab_metadata(const SyntheticVocab& v, GgufMetadata& md) {
  const bool spm = v.kind == VocabKind::kSpm;
  md.set("tokenizer.ggml.model", std::string(v.wordpiece ? "bert" : spm ? "llama" : "gpt2"));
  if (!spm) md.set("tokenizer.ggml.pre", v.pre);
  md.set("tokenizer.ggml.tokens", GgufValue::array(v.tokens));
  if (spm) md.set("tokenizer.ggml.scores", GgufValue::array(v.scores));
  md.set("tokenizer.ggml.token_type", GgufValue::array(v.token_types));
  if (!spm) md.set("tokenizer.ggml.merges", GgufValue::array(v.merges));
  md.set("tokenizer.ggml.bos_token_id", v.bos_id);
  md.set("tokenizer.ggml.eos_token_id", v.eos_id);
  md.set("tokenizer.ggml.eot_token_id", v.eot_id);
  if (spm) md.set("tokenizer.ggml.unknown_token_id", v.unk_id);
  md.set("tokenizer.ggml.add_bos_token", v.add_bos);
  md.set("tokenizer.ggml.add_eos_token", false);
  if (v.wordpiece) {
    md.set("tokenizer.ggml.seperator_token_id", v.eos_id);
    md.set("tokenizer.ggml.add_sep_token", true);
    md.set("tokenizer.ggml.token_type_count", uint32_t{2});
    return;
  }
  md.set("tokenizer.ggml.add_space_prefix", spm);
}

}  // namespace met
