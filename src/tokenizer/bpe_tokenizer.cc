// Byte-level BPE. Tested by tests/tokenizer/bpe_tokenizer_test.cc.
#include "tokenizer/bpe_tokenizer.h"

#include <queue>
#include <span>
#include <string>

#include "tokenizer/byte_level.h"

namespace met {
namespace {

// Pieces longer than this are rarely repeated; caching them only costs memory.
constexpr size_t kMaxCachedPieceBytes = 64;


struct Candidate {
  int32_t rank;
  int32_t left;
  int32_t right;
  int32_t left_id;
  int32_t right_id;
  int32_t result;
};

struct CandidateOrder {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

// Assigns ids to merge texts: vocab ids where the text is a token, private
// ids past the vocabulary otherwise.
class SymbolIds {
 public:
  explicit SymbolIds(const Vocab& vocab) : vocab_(vocab), next_(static_cast<int32_t>(vocab.size())) {}
  int32_t operator()(const std::string& text) {
    if (std::optional<TokenId> id = vocab_.find(text)) return *id;
    const auto [it, inserted] = extra_.emplace(text, next_);
    if (inserted) ++next_;
    return it->second;
  }

 private:
  const Vocab& vocab_;
  int32_t next_;
  std::unordered_map<std::string, int32_t> extra_;
};

}  // namespace

Result<BpeTokenizer> BpeTokenizer::create(const Vocab& vocab, size_t cache_entries) {
  MET_CHECK(vocab.model() == VocabModel::kBpe, "BpeTokenizer over a {} vocab", vocab_model_name(vocab.model()));
  MET_ASSIGN_OR_RETURN(PreTokenizer pre, PreTokenizer::create(vocab.pre().kind));
  BpeTokenizer tokenizer(vocab, std::move(pre), cache_entries);
  tokenizer.build_merge_table();
  return tokenizer;
}

BpeTokenizer::BpeTokenizer(const Vocab& vocab, PreTokenizer pre, size_t cache_entries)
    : vocab_(&vocab), pre_(std::move(pre)), cache_(std::make_unique<BpeCache>(cache_entries)) {}

void BpeTokenizer::build_merge_table() {
  SymbolIds ids(*vocab_);
  for (int b = 0; b < 256; ++b) byte_symbol_[b] = ids(to_byte_level(std::string(1, static_cast<char>(b))));
  const auto& merges = vocab_->merges();
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    if (left.empty() || right.empty()) continue;
    const int32_t l = ids(left);
    const int32_t r = ids(right);
    // emplace keeps the first (best) rank of a duplicated merge, as llama.cpp does.
    merges_.emplace(pair_key(l, r), MergeRule{static_cast<int32_t>(rank), ids(left + right)});
  }
}

void BpeTokenizer::encode(std::string_view raw, std::vector<TokenId>& out) const {
  std::vector<std::string_view> pieces;
  pre_.split(raw, pieces);
  for (std::string_view piece : pieces) {
    if (piece.size() > kMaxCachedPieceBytes) {
      encode_piece_uncached(piece, out);
      continue;
    }
    if (cache_->find(piece, out)) continue;
    const size_t before = out.size();
    encode_piece_uncached(piece, out);
    cache_->insert(piece, std::span<const TokenId>(out.data() + before, out.size() - before));
  }
}

void BpeTokenizer::encode_piece_uncached(std::string_view piece, std::vector<TokenId>& out) const {
  if (piece.empty()) return;
  if (vocab_->pre().ignore_merges) {
    if (std::optional<TokenId> id = vocab_->find(to_byte_level(piece))) {
      out.push_back(*id);
      return;
    }
  }
  merge_symbols(piece, out);
}

void BpeTokenizer::merge_symbols(std::string_view piece, std::vector<TokenId>& out) const {
  std::vector<Symbol> symbols(piece.size());
  const auto last = static_cast<int32_t>(piece.size()) - 1;
  for (int32_t i = 0; i <= last; ++i) {
    symbols[i] = {byte_symbol_[static_cast<uint8_t>(piece[i])], i - 1, i == last ? -1 : i + 1,
                  static_cast<uint32_t>(i), 1};
  }
  std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> queue;
  const auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const auto it = merges_.find(pair_key(symbols[left].id, symbols[right].id));
    if (it == merges_.end()) return;
    queue.push({it->second.rank, left, right, symbols[left].id, symbols[right].id, it->second.result});
  };
  for (int32_t i = 1; i <= last; ++i) try_add(i - 1, i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& left = symbols[c.left];
    Symbol& right = symbols[c.right];
    // Stale when either side has merged since: its id (and text) changed.
    if (left.len == 0 || right.len == 0 || left.id != c.left_id || right.id != c.right_id) continue;
    left = {c.result, left.prev, right.next, left.begin, left.len + right.len};
    right.len = 0;
    if (right.next >= 0) symbols[right.next].prev = c.left;
    try_add(left.prev, c.left);
    try_add(c.left, left.next);
  }
  emit_symbols(piece, symbols, out);
}

void BpeTokenizer::emit_symbols(std::string_view piece, std::span<const Symbol> symbols,
                                std::vector<TokenId>& out) const {
  const auto vocab_size = static_cast<int32_t>(vocab_->size());
  for (int32_t i = 0; i != -1; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    if (s.id < vocab_size) {
      out.push_back(s.id);
      continue;
    }
    for (uint32_t k = s.begin; k < s.begin + s.len; ++k) {  // not a token: its bytes' tokens
      const int32_t byte_id = byte_symbol_[static_cast<uint8_t>(piece[k])];
      if (byte_id < vocab_size) out.push_back(byte_id);
    }
  }
}

}  // namespace met
