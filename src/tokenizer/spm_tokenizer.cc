// SentencePiece-style merges. Tested by tests/tokenizer/spm_tokenizer_test.cc.
#include "tokenizer/spm_tokenizer.h"

#include <queue>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "tokenizer/utf8.h"

namespace met {
namespace {

struct Symbol {
  int prev;
  int next;
  size_t begin;
  size_t len;  // 0 once merged into its left neighbour
};

struct Bigram {
  double score;  // the token's score, or minus the merge's rank
  int left;
  int right;
  size_t len;
};

struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

std::string escape_spaces(std::string_view raw, bool add_space_prefix) {
  std::string out;
  out.reserve(raw.size() + raw.size() / 2 + 3);
  if (add_space_prefix) out.append(kSpmSpace);
  for (char c : raw) {
    if (c == ' ') {
      out.append(kSpmSpace);
    } else {
      out += c;
    }
  }
  return out;
}

// As in SentencePiece, merges can form only these kinds of tokens.
std::optional<TokenId> mergeable(const Vocab& vocab, std::string_view text) {
  const std::optional<TokenId> id = vocab.find(text);
  if (!id) return std::nullopt;
  switch (vocab.token(*id).kind) {
    case TokenKind::kNormal:
    case TokenKind::kUserDefined:
    case TokenKind::kUnused:
    case TokenKind::kUndefined:
      return id;
    case TokenKind::kUnknown:
    case TokenKind::kControl:
    case TokenKind::kByte:
      return std::nullopt;
  }
  return std::nullopt;
}

uint64_t pair_key(TokenId left, TokenId right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// One encode call's working state.
class SpmSession {
 public:
  // `ranks` empty: merges by score.
  SpmSession(std::string_view text, const Vocab& vocab, const SpmTokenizer::MergeRanks& ranks)
      : text_(text), vocab_(vocab), ranks_(ranks) {}

  // Runs the merges; returns the final symbols' texts in order.
  std::vector<std::string_view> run() {
    for (size_t pos = 0; pos < text_.size();) {
      const size_t len = decode_utf8(text_, pos).length;
      const int index = static_cast<int>(symbols_.size());
      symbols_.push_back({index - 1, pos + len == text_.size() ? -1 : index + 1, pos, len});
      pos += len;
    }
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_add(i - 1, i);
    while (!queue_.empty()) {
      const Bigram b = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[b.left];
      Symbol& right = symbols_[b.right];
      if (left.len == 0 || right.len == 0 || left.len + right.len != b.len) continue;
      left.len += right.len;
      right.len = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = b.left;
      try_add(left.prev, b.left);
      try_add(b.left, left.next);
    }
    std::vector<std::string_view> result;
    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next) {
      result.push_back(text_.substr(symbols_[i].begin, symbols_[i].len));
    }
    return result;
  }

  // Where an UNUSED token came from, to split it back (SentencePiece's
  // rev_merge: keyed by text, the last merge of that text wins).
  const std::unordered_map<std::string_view, std::pair<std::string_view, std::string_view>>&
  rev_merge() const {
    return rev_merge_;
  }

 private:
  void try_add(int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols_[left];
    const Symbol& r = symbols_[right];
    const std::string_view merged = text_.substr(l.begin, l.len + r.len);
    const std::optional<TokenId> id = mergeable(vocab_, merged);
    if (!id) return;
    if (!ranks_.empty()) {
      const std::optional<TokenId> l_id = vocab_.find(text_.substr(l.begin, l.len));
      const std::optional<TokenId> r_id = vocab_.find(text_.substr(r.begin, r.len));
      if (!l_id || !r_id) return;
      const auto rank = ranks_.find(pair_key(*l_id, *r_id));
      if (rank == ranks_.end()) return;
      queue_.push({-static_cast<double>(rank->second), left, right, merged.size()});
      return;
    }
    queue_.push({vocab_.token(*id).score, left, right, merged.size()});
    if (vocab_.token(*id).kind == TokenKind::kUnused) {
      rev_merge_[merged] = {text_.substr(l.begin, l.len), text_.substr(r.begin, r.len)};
    }
  }

  std::string_view text_;
  const Vocab& vocab_;
  const SpmTokenizer::MergeRanks& ranks_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
  std::unordered_map<std::string_view, std::pair<std::string_view, std::string_view>> rev_merge_;
};

}  // namespace

SpmTokenizer::SpmTokenizer(const Vocab& vocab) : vocab_(&vocab) {
  for (int b = 0; b < 256; ++b) byte_tokens_[b] = vocab.find(fmt::format("<0x{:02X}>", b));
  const auto& merges = vocab.merges();
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::optional<TokenId> left = vocab.find(merges[rank].first);
    const std::optional<TokenId> right = vocab.find(merges[rank].second);
    if (!left || !right || !vocab.find(merges[rank].first + merges[rank].second)) continue;
    merge_ranks_.emplace(pair_key(*left, *right), static_cast<int32_t>(rank));  // the first rank of a pair wins
  }
}

void SpmTokenizer::emit_symbol(std::string_view text, size_t fragment_begin, std::vector<TokenId>& out) const {
  const std::optional<TokenId> id = vocab_->find(text);
  if (id) {
    out.push_back(*id);
    return;
  }
  bool all_bytes = true;
  for (char c : text) all_bytes = all_bytes && byte_tokens_[static_cast<uint8_t>(c)].has_value();
  if (all_bytes) {
    for (char c : text) out.push_back(*byte_tokens_[static_cast<uint8_t>(c)]);
  } else if (const std::optional<TokenId> unk = vocab_->special().unk) {
    // A merging-by-rank vocab fuses a run of unknowns, as its BPE does.
    if (!merge_ranks_.empty() && out.size() > fragment_begin && out.back() == *unk) return;
    out.push_back(*unk);
  }
}

void SpmTokenizer::encode(std::string_view raw, bool add_space_prefix,
                          std::vector<TokenId>& out) const {
  const size_t fragment_begin = out.size();
  const std::string text = escape_spaces(raw, add_space_prefix);
  SpmSession session(text, *vocab_, merge_ranks_);
  const std::vector<std::string_view> symbols = session.run();
  // Resegments UNUSED results into their halves, depth first.
  std::vector<std::string_view> stack;
  for (std::string_view symbol : symbols) {
    stack.push_back(symbol);
    while (!stack.empty()) {
      const std::string_view s = stack.back();
      stack.pop_back();
      const std::optional<TokenId> id = vocab_->find(s);
      const auto it = session.rev_merge().find(s);
      if (id && vocab_->token(*id).kind == TokenKind::kUnused && it != session.rev_merge().end()) {
        stack.push_back(it->second.second);
        stack.push_back(it->second.first);
        continue;
      }
      emit_symbol(s, fragment_begin, out);
    }
  }
}

}  // namespace met
