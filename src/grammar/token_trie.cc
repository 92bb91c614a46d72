// TokenTrie: sorting token byte strings and laying the trie out in preorder.
// Tested by tests/grammar/token_trie_test.cc.
#include "grammar/token_trie.h"

#include <algorithm>
#include <utility>

#include "core/check.h"

namespace met {
namespace {

bool grammar_may_emit(TokenKind kind) {
  switch (kind) {
    case TokenKind::kNormal:
    case TokenKind::kByte:
    case TokenKind::kUserDefined:
      return true;
    case TokenKind::kUndefined:
    case TokenKind::kUnknown:
    case TokenKind::kControl:
    case TokenKind::kUnused:
      return false;
  }
  return false;
}

}  // namespace

TokenTrie TokenTrie::build(const Tokenizer& tokenizer) {
  const Vocab& vocab = tokenizer.vocab();
  std::vector<std::string> pieces(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    if (grammar_may_emit(vocab.token(id).kind) && !vocab.is_eog(id)) {
      pieces[i] = std::string(tokenizer.token_to_piece(id, true));
    }
  }
  return from_pieces(std::move(pieces), vocab.eog_ids());
}

TokenTrie TokenTrie::from_pieces(std::vector<std::string> pieces, std::vector<TokenId> eog_ids) {
  TokenTrie t;
  t.eog_ids_ = std::move(eog_ids);
  std::sort(t.eog_ids_.begin(), t.eog_ids_.end());
  t.offsets_.push_back(0);
  std::vector<TokenId> order;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    if (t.is_eog(id)) pieces[i].clear();
    t.bytes_ += pieces[i];
    t.offsets_.push_back(static_cast<uint32_t>(t.bytes_.size()));
    if (!pieces[i].empty()) order.push_back(id);
  }
  std::stable_sort(order.begin(), order.end(), [&](TokenId a, TokenId b) { return pieces[a] < pieces[b]; });
  t.nodes_.push_back({});
  std::vector<uint32_t> path = {0};  // node index at each depth of the current string
  std::string_view prev;
  for (TokenId id : order) {
    const std::string_view s = pieces[id];
    size_t common = 0;
    while (common < prev.size() && common < s.size() && prev[common] == s[common]) ++common;
    for (; path.size() > common + 1; path.pop_back()) t.nodes_[path.back()].subtree_end = static_cast<uint32_t>(t.nodes_.size());
    for (size_t d = common; d < s.size(); ++d) {
      MET_CHECK(d + 1 <= 0xFFFF, "token {} longer than 65535 bytes", id);
      path.push_back(static_cast<uint32_t>(t.nodes_.size()));
      t.nodes_.push_back({0, 0, static_cast<uint16_t>(d + 1), 0, static_cast<uint8_t>(s[d])});
    }
    Node& end = t.nodes_[path.back()];
    if (end.num_tokens == 0) end.first_token = static_cast<uint32_t>(t.tokens_.size());
    if (end.num_tokens < 255) {
      t.tokens_.push_back(id);
      ++end.num_tokens;
    }
    prev = s;
  }
  for (; !path.empty(); path.pop_back()) t.nodes_[path.back()].subtree_end = static_cast<uint32_t>(t.nodes_.size());
  return t;
}

bool TokenTrie::is_eog(TokenId id) const { return std::binary_search(eog_ids_.begin(), eog_ids_.end(), id); }

std::string_view TokenTrie::bytes(TokenId id) const {
  MET_DCHECK(id >= 0 && static_cast<size_t>(id) < vocab_size());
  const auto i = static_cast<size_t>(id);
  return std::string_view(bytes_).substr(offsets_[i], offsets_[i + 1] - offsets_[i]);
}

}  // namespace met
