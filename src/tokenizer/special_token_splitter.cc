// Special-token matching. Tested by tests/tokenizer/special_token_splitter_test.cc.
#include "tokenizer/special_token_splitter.h"

#include <algorithm>

namespace met {
namespace {

bool is_c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool contains_in_raw(const std::vector<TextFragment>& fragments, std::string_view needle) {
  return std::any_of(fragments.begin(), fragments.end(), [&](const TextFragment& f) {
    return !f.token && f.text.find(needle) != std::string_view::npos;
  });
}

}  // namespace

SpecialTokenSplitter::SpecialTokenSplitter(const Vocab& vocab) {
  for (size_t i = 0; i < vocab.size(); ++i) {
    const TokenData& t = vocab.token(static_cast<TokenId>(i));
    const bool control = t.kind == TokenKind::kControl || t.kind == TokenKind::kUnknown;
    if (!control && t.kind != TokenKind::kUserDefined) continue;
    candidates_.push_back({static_cast<TokenId>(i), t.text, control, t.lstrip, t.rstrip});
  }
  std::stable_sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
    return a.text.size() > b.text.size();
  });
}

void SpecialTokenSplitter::split_out(const Candidate& c, std::string_view raw,
                                     std::vector<TextFragment>& out) {
  while (!raw.empty()) {
    const size_t at = raw.find(c.text);
    if (at == std::string_view::npos) break;
    std::string_view left = raw.substr(0, at);
    if (c.lstrip) {
      while (!left.empty() && is_c_space(left.back())) left.remove_suffix(1);
    }
    if (!left.empty()) out.push_back({left, std::nullopt});
    out.push_back({{}, c.id});
    raw.remove_prefix(at + c.text.size());
    if (c.rstrip) {
      while (!raw.empty() && is_c_space(raw.front())) raw.remove_prefix(1);
    }
  }
  if (!raw.empty()) out.push_back({raw, std::nullopt});
}

std::vector<TextFragment> SpecialTokenSplitter::split(std::string_view text, bool parse_special) const {
  std::vector<TextFragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({text, std::nullopt});
  std::vector<TextFragment> next;
  for (const Candidate& c : candidates_) {
    if (c.control && !parse_special) continue;
    if (!contains_in_raw(fragments, c.text)) continue;
    next.clear();
    for (const TextFragment& f : fragments) {
      if (f.token) {
        next.push_back(f);
      } else {
        split_out(c, f.text, next);
      }
    }
    fragments.swap(next);
  }
  return fragments;
}

}  // namespace met
