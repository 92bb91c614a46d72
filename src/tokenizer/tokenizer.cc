// Tokenizer facade. Tested by tests/tokenizer/tokenizer_test.cc.
#include "tokenizer/tokenizer.h"

#include <cstdlib>

#include "tokenizer/byte_level.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (size_t at = text.find(from); at != std::string_view::npos; at = text.find(from, pos)) {
    out.append(text.substr(pos, at - pos));
    out.append(to);
    pos = at + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

// "<0x0A>" -> "\n"; nullopt when the text is not of that form.
std::optional<char> byte_token_value(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text.back() != '>') return std::nullopt;
  char* end = nullptr;
  const std::string hex(text.substr(3, 2));
  const long value = std::strtol(hex.c_str(), &end, 16);
  if (end != hex.c_str() + 2) return std::nullopt;
  return static_cast<char>(value);
}

std::string piece_of(const Vocab& vocab, const TokenData& t) {
  switch (t.kind) {
    case TokenKind::kNormal:  // SentencePiece, Unigram and WordPiece texts use "▁"
      return vocab.model() == VocabModel::kBpe ? from_byte_level(t.text)
                                               : replace_all(t.text, kSpmSpace, " ");
    case TokenKind::kByte:
      if (std::optional<char> b = byte_token_value(t.text)) return std::string(1, *b);
      return t.text;
    case TokenKind::kUserDefined:
    case TokenKind::kControl:
    case TokenKind::kUnknown:
      return t.text;
    case TokenKind::kUnused:
    case TokenKind::kUndefined:
      return {};
  }
  return {};
}

}  // namespace

Result<Tokenizer> Tokenizer::create(Vocab vocab, const TokenizerOptions& options) {
  auto owned = std::make_unique<const Vocab>(std::move(vocab));
  const Vocab& v = *owned;
  switch (v.model()) {
    case VocabModel::kSpm:
      return Tokenizer(std::move(owned), SpmTokenizer(v));
    case VocabModel::kWpm:
      return Tokenizer(std::move(owned), WpmTokenizer(v));
    case VocabModel::kBpe: {
      MET_ASSIGN_OR_RETURN(BpeTokenizer bpe, BpeTokenizer::create(v, options.bpe_cache_entries));
      return Tokenizer(std::move(owned), std::move(bpe));
    }
    case VocabModel::kUgm: {
      MET_ASSIGN_OR_RETURN(UgmTokenizer ugm, UgmTokenizer::create(v));
      return Tokenizer(std::move(owned), std::move(ugm));
    }
  }
  return internal_error("unknown vocab model");
}

Result<Tokenizer> Tokenizer::from_gguf(const GgufMetadata& md, const TokenizerOptions& options) {
  MET_ASSIGN_OR_RETURN(Vocab vocab, Vocab::from_gguf(md));
  return create(std::move(vocab), options);
}

Tokenizer::Tokenizer(std::unique_ptr<const Vocab> vocab, Algorithm algorithm)
    : vocab_(std::move(vocab)), algorithm_(std::move(algorithm)), splitter_(*vocab_) {
  pieces_.reserve(vocab_->size());
  for (size_t i = 0; i < vocab_->size(); ++i) {
    pieces_.push_back(piece_of(*vocab_, vocab_->token(static_cast<TokenId>(i))));
  }
}

void Tokenizer::encode_fragment(std::string_view raw, bool after_special,
                                std::vector<TokenId>& out) const {
  std::visit(
      [&](const auto& algorithm) {
        using T = std::decay_t<decltype(algorithm)>;
        if constexpr (std::is_same_v<T, SpmTokenizer>) {
          // llama.cpp puts the space prefix before the first fragment and after each special token.
          algorithm.encode(raw, vocab_->add_space_prefix() && after_special, out);
        } else {
          algorithm.encode(raw, out);
        }
      },
      algorithm_);
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  std::string sanitized;
  if (!is_valid_utf8(text)) {
    sanitized = sanitize_utf8(text);
    text = sanitized;
  }
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 4);
  const SpecialTokenIds& special = vocab_->special();
  if (options.add_special && vocab_->add_bos()) out.push_back(*special.bos);
  bool after_special = true;
  for (const TextFragment& fragment : splitter_.split(text, options.parse_special)) {
    if (fragment.token) {
      out.push_back(*fragment.token);
      after_special = true;
      continue;
    }
    encode_fragment(fragment.text, after_special, out);
    after_special = false;
  }
  if (options.add_special && vocab_->add_eos()) out.push_back(*special.eos);
  if (options.add_special && vocab_->add_sep()) out.push_back(*special.sep);
  return out;
}

std::string_view Tokenizer::token_to_piece(TokenId id, bool render_special) const {
  if (!vocab_->contains(id)) return {};
  const TokenKind kind = vocab_->token(id).kind;
  if (!render_special && (kind == TokenKind::kControl || kind == TokenKind::kUnknown)) return {};
  return pieces_[static_cast<size_t>(id)];
}

bool Tokenizer::strips_leading_space() const {
  switch (vocab_->model()) {
    case VocabModel::kSpm:
      return vocab_->add_space_prefix();
    case VocabModel::kUgm:  // remove_extra_whitespaces puts "▁" before the first word too
      return vocab_->add_space_prefix() || vocab_->remove_extra_whitespaces();
    case VocabModel::kWpm:
      return true;
    case VocabModel::kBpe:
      return false;
  }
  return false;
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special) const {
  std::string out;
  bool first = true;
  for (const TokenId id : ids) {
    std::string_view piece = token_to_piece(id, !skip_special);
    if (piece.empty()) continue;
    if (first && strips_leading_space() && piece.front() == ' ') piece.remove_prefix(1);
    first = false;
    out.append(piece);
  }
  return is_valid_utf8(out) ? out : sanitize_utf8(out);
}

}  // namespace met
