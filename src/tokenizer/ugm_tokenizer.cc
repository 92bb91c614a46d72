// Unigram (UGM) segmentation. Tested by tests/tokenizer/ugm_tokenizer_test.cc.
#include "tokenizer/ugm_tokenizer.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

constexpr double kUnknownPenalty = 10.0;  // SentencePiece's kUnkPenalty

uint64_t ugm_edge_key(uint32_t node, uint8_t byte) { return (static_cast<uint64_t>(node) << 8) | byte; }

// Spans of the best path, in text order; a nullopt token is an unknown run.
struct UgmSegment {
  size_t begin;
  size_t end;
  std::optional<TokenId> token;
};

}  // namespace

struct UgmTokenizer::PathStep {
  size_t start = 0;
  double score = -std::numeric_limits<double>::infinity();
  std::optional<TokenId> token;  // nullopt: the unknown token

  void offer(size_t from, double candidate, std::optional<TokenId> id) {
    if (candidate > score) *this = PathStep{from, candidate, id};
  }
};

UgmTokenizer::PieceTrie::PieceTrie(const std::vector<std::pair<std::string_view, TokenId>>& entries) {
  values_.emplace_back();
  std::unordered_map<uint64_t, uint32_t> edges;
  for (const auto& [text, id] : entries) {
    uint32_t node = 0;
    for (char c : text) {
      const auto [it, inserted] = edges.try_emplace(ugm_edge_key(node, static_cast<uint8_t>(c)),
                                                    static_cast<uint32_t>(values_.size()));
      if (inserted) values_.emplace_back();
      node = it->second;
    }
    if (!values_[node]) values_[node] = id;
  }
  std::vector<std::pair<uint64_t, uint32_t>> sorted(edges.begin(), edges.end());
  std::sort(sorted.begin(), sorted.end());
  first_edge_.assign(values_.size() + 1, 0);
  for (const auto& [key, child_node] : sorted) ++first_edge_[(key >> 8) + 1];
  for (size_t n = 1; n < first_edge_.size(); ++n) first_edge_[n] += first_edge_[n - 1];
  edge_bytes_.reserve(sorted.size());
  edge_children_.reserve(sorted.size());
  for (const auto& [key, child_node] : sorted) {
    edge_bytes_.push_back(static_cast<uint8_t>(key & 0xFF));
    edge_children_.push_back(child_node);
  }
}

std::optional<uint32_t> UgmTokenizer::PieceTrie::child(uint32_t node, uint8_t byte) const {
  const auto begin = edge_bytes_.begin() + first_edge_[node];
  const auto end = edge_bytes_.begin() + first_edge_[node + 1];
  const auto it = std::lower_bound(begin, end, byte);
  if (it == end || *it != byte) return std::nullopt;
  return edge_children_[static_cast<size_t>(it - edge_bytes_.begin())];
}

Result<UgmTokenizer> UgmTokenizer::create(const Vocab& vocab) {
  MET_ASSIGN_OR_RETURN(PrecompiledCharsmap charsmap, PrecompiledCharsmap::parse(vocab.precompiled_charsmap()));
  return UgmTokenizer(vocab, std::move(charsmap));
}

UgmTokenizer::UgmTokenizer(const Vocab& vocab, PrecompiledCharsmap charsmap)
    : vocab_(&vocab), charsmap_(std::move(charsmap)) {
  std::vector<std::pair<std::string_view, TokenId>> matchable;
  std::vector<std::pair<std::string_view, TokenId>> user_defined;
  std::optional<float> min_score;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    const TokenData& t = vocab.token(id);
    if (t.kind == TokenKind::kNormal) min_score = std::min(min_score.value_or(t.score), t.score);
    if (t.kind == TokenKind::kNormal || t.kind == TokenKind::kUserDefined || t.kind == TokenKind::kUnused) {
      matchable.emplace_back(t.text, id);
    }
    if (t.kind == TokenKind::kUserDefined) user_defined.emplace_back(t.text, id);
  }
  pieces_ = PieceTrie(matchable);
  user_defined_ = PieceTrie(user_defined);
  unknown_score_ = static_cast<double>(min_score.value_or(0.0f)) - kUnknownPenalty;
  for (int b = 0; b < 256; ++b) {
    const std::optional<TokenId> id = vocab.find(fmt::format("<0x{:02X}>", b));
    if (id && vocab.token(*id).kind == TokenKind::kByte) byte_tokens_[b] = id;
  }
}

size_t UgmTokenizer::user_defined_prefix(std::string_view text) const {
  size_t longest = 0;
  uint32_t node = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::optional<uint32_t> next = user_defined_.child(node, static_cast<uint8_t>(text[i]));
    if (!next) break;
    node = *next;
    if (user_defined_.value(node)) longest = i + 1;
  }
  return longest;
}

std::string UgmTokenizer::normalize(std::string_view raw) const {
  std::string out;
  out.reserve(raw.size() * 3);
  const bool merge_spaces = vocab_->remove_extra_whitespaces();
  bool in_word = false;
  bool prefixed = false;
  const auto put = [&](std::string_view chunk) {
    for (const char c : chunk) {
      if (c == ' ') {
        in_word = false;
        if (!merge_spaces) out.append(kSpmSpace);
        continue;
      }
      if (!in_word && ((vocab_->add_space_prefix() && !prefixed) || merge_spaces)) {
        out.append(kSpmSpace);
        prefixed = true;
      }
      in_word = true;
      out += c;
    }
  };
  for (size_t pos = 0; pos < raw.size();) {
    const std::string_view rest = raw.substr(pos);
    if (const size_t n = user_defined_prefix(rest); n > 0) {
      put(rest.substr(0, n));
      pos += n;
    } else if (const std::optional<CharsmapMatch> m = charsmap_.longest_match(rest)) {
      put(m->replacement);
      pos += m->consumed_bytes;
    } else {
      const Utf8Char c = decode_utf8(raw, pos);
      const bool valid = c.status == Utf8Status::kOk;
      put(valid ? rest.substr(0, c.length) : kReplacementUtf8);
      pos += valid ? c.length : 1;
    }
  }
  return out;
}

// Viterbi over the lattice of tokens starting at each character: path[e] is
// the best way to cover text[0, e).
std::vector<UgmTokenizer::PathStep> UgmTokenizer::best_path(std::string_view text) const {
  std::vector<PathStep> path(text.size() + 1);
  path[0].score = 0.0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t char_len = std::min<size_t>(decode_utf8(text, begin).length, text.size() - begin);
    const double base = path[begin].score;
    bool char_covered = false;
    uint32_t node = 0;
    for (size_t end = begin; end < text.size(); ++end) {
      const std::optional<uint32_t> next = pieces_.child(node, static_cast<uint8_t>(text[end]));
      if (!next) break;
      node = *next;
      const std::optional<TokenId> id = pieces_.value(node);
      if (!id) continue;
      char_covered = char_covered || end + 1 - begin == char_len;
      const TokenData& t = vocab_->token(*id);
      const double score = t.kind == TokenKind::kUserDefined ? 0.0 : static_cast<double>(t.score);
      path[end + 1].offer(begin, base + score, id);
    }
    if (!char_covered) path[begin + char_len].offer(begin, base + unknown_score_, std::nullopt);
    begin += char_len;
  }
  return path;
}

void UgmTokenizer::emit_unknown(std::string_view text, std::vector<TokenId>& out) const {
  const bool all_bytes = std::all_of(text.begin(), text.end(),
                                     [this](char c) { return byte_tokens_[static_cast<uint8_t>(c)].has_value(); });
  if (all_bytes) {
    for (const char c : text) out.push_back(*byte_tokens_[static_cast<uint8_t>(c)]);
  } else if (const std::optional<TokenId> unk = vocab_->special().unk) {
    out.push_back(*unk);
  }
}

void UgmTokenizer::encode(std::string_view raw, std::vector<TokenId>& out) const {
  const std::string text = normalize(raw);
  if (text.empty()) return;
  const std::vector<PathStep> path = best_path(text);
  std::vector<UgmSegment> segments;  // from the end backwards
  for (size_t end = text.size(); end > 0; end = path[end].start) {
    const PathStep& step = path[end];
    if (!step.token && !segments.empty() && !segments.back().token) {
      segments.back().begin = step.start;  // fuse adjacent unknowns
      continue;
    }
    segments.push_back({step.start, end, step.token});
  }
  for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
    if (it->token) {
      out.push_back(*it->token);
    } else {
      emit_unknown(text.substr(it->begin, it->end - it->begin), out);
    }
  }
}

}  // namespace met
