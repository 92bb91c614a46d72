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
  std::string tail = sanitize_utf8(bytes_);
  bytes_.clear();
  DetokenizerStep step = emit(std::move(tail));
  if (!step.stop) {
    step.text += held_;
    held_.clear();
  }
  stopped_ = true;
  return step;
}

DetokenizerStep IncrementalDetokenizer::emit(std::string new_text) {
  DetokenizerStep step;
  if (options_.stop_strings.empty()) {
    step.text = std::move(new_text);
    return step;
  }
  std::string candidate = std::move(held_);
  candidate += new_text;
  held_.clear();
  if (const std::optional<StopHit> hit = find_stop(candidate, options_.stop_strings)) {
    candidate.resize(hit->position);
    step.text = std::move(candidate);
    step.stop = hit->stop_index;
    stopped_ = true;
    bytes_.clear();
    return step;
  }
  const size_t hold = stop_prefix_suffix_length(candidate, options_.stop_strings);
  held_ = candidate.substr(candidate.size() - hold);
  candidate.resize(candidate.size() - hold);
  step.text = std::move(candidate);
  return step;
}

}  // namespace met
