// Streaming detokenization. Tested by tests/tokenizer/incremental_detokenizer_test.cc.
#include "tokenizer/incremental_detokenizer.h"

#include "tokenizer/stop_strings.h"
#include "tokenizer/utf8.h"

namespace met {
namespace {

// Moves the complete characters of `bytes` to `out` (invalid sequences as
// U+FFFD) and leaves an incomplete tail in `bytes`.
void append_complete(std::string& bytes, std::string& out) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Utf8Char c = decode_utf8(bytes, pos);
    if (c.status == Utf8Status::kIncomplete) break;
    if (c.status == Utf8Status::kOk) {
      out.append(bytes, pos, c.length);
    } else {
      out.append(kReplacementUtf8);
    }
    pos += c.length;
  }
  bytes.erase(0, pos);
}


}  // namespace

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, DetokenizerOptions options)
    : tokenizer_(&tokenizer),
      options_(std::move(options)),
      strip_pending_(options_.at_sequence_start && tokenizer.strips_leading_space()) {}

DetokenizerStep IncrementalDetokenizer::push(TokenId id) {
  DetokenizerStep step;
  step.stop = push(id, step.text);
  return step;
}

std::optional<size_t> IncrementalDetokenizer::push(TokenId id, std::string& text) {
  if (stopped_) return std::nullopt;
  std::string_view piece = tokenizer_->token_to_piece(id, !options_.skip_special);
  if (piece.empty()) return std::nullopt;
  if (strip_pending_) {
    if (piece.front() == ' ') piece.remove_prefix(1);
    strip_pending_ = false;
  }
  bytes_.append(piece);
  return emit_into(text);
}

std::optional<size_t> IncrementalDetokenizer::emit_into(std::string& text) {
  if (options_.stop_strings.empty()) {
    append_complete(bytes_, text);
    return std::nullopt;
  }
  candidate_.assign(held_);
  append_complete(bytes_, candidate_);
  return settle_candidate(text);
}

std::optional<size_t> IncrementalDetokenizer::settle_candidate(std::string& text) {
  held_.clear();
  if (const std::optional<StopHit> hit = find_stop(candidate_, options_.stop_strings)) {
    text.append(candidate_, 0, hit->position);
    stopped_ = true;
    bytes_.clear();
    return hit->stop_index;
  }
  const size_t hold = stop_prefix_suffix_length(candidate_, options_.stop_strings);
  held_.assign(candidate_, candidate_.size() - hold, hold);
  text.append(candidate_, 0, candidate_.size() - hold);
  return std::nullopt;
}

DetokenizerStep IncrementalDetokenizer::finish() {
  if (stopped_) return {};
  DetokenizerStep step;
  const std::string tail = sanitize_utf8(bytes_);
  bytes_.clear();
  if (options_.stop_strings.empty()) {
    step.text = tail;
  } else {
    candidate_.assign(held_);
    candidate_ += tail;
    step.stop = settle_candidate(step.text);
    if (!step.stop) step.text += held_;  // nothing more can complete a stop string
    held_.clear();
  }
  stopped_ = true;
  return step;
}

}  // namespace met
