// IncrementalDetokenizer: turns one sequence's tokens into text as they
// arrive, for streaming. It never splits a UTF-8 character (the bytes of an
// incomplete one wait for the next token; a sequence that can never complete
// becomes U+FFFD), handles byte tokens, can drop SentencePiece's leading space
// at the start of a sequence, and withholds text that might begin a stop
// string, reporting a stop with the text before it.
// Invariants: all emitted text is valid UTF-8; concatenating every step's text
// and finish() gives the tokenizer's decode() of the same ids, cut before the
// first stop string; nothing is emitted after a stop.
// Threading: one per sequence, used by one thread at a time; the Tokenizer it
// borrows must outlive it.
// Tested by tests/tokenizer/incremental_detokenizer_test.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace met {

struct DetokenizerOptions {
  bool skip_special = true;  // CONTROL and UNKNOWN tokens render as nothing
  // The first token pushed begins the sequence (BOS or the first prompt
  // token): drop the leading space of the first piece, as decode() does.
  // False when streaming a completion that continues a prompt.
  bool at_sequence_start = false;
  std::vector<std::string> stop_strings = {};
};

struct DetokenizerStep {
  std::string text;                // text that is final now
  std::optional<size_t> stop;      // a stop string matched; `text` ends before it
};

class IncrementalDetokenizer {
 public:
  IncrementalDetokenizer(const Tokenizer& tokenizer, DetokenizerOptions options);

  // Adds one token; after a stop it returns nothing.
  DetokenizerStep push(TokenId id);
  // As push(id), appending the text that is final now to `text` (whose
  // capacity the caller reuses: no allocation for a steady stream); returns
  // the stop string matched, if any.
  std::optional<size_t> push(TokenId id, std::string& text);
  // The sequence ended: releases held text, an incomplete character as U+FFFD.
  DetokenizerStep finish();

  bool stopped() const { return stopped_; }

 private:
  // Appends the complete characters of bytes_ to `text` (after held_, when
  // there are stop strings) and reports a stop.
  std::optional<size_t> emit_into(std::string& text);
  // With stop strings: appends what of candidate_ (held_ plus new text) is
  // final to `text`, holds back what may begin a stop string, reports a stop.
  std::optional<size_t> settle_candidate(std::string& text);

  const Tokenizer* tokenizer_;
  DetokenizerOptions options_;
  bool strip_pending_;
  bool stopped_ = false;
  std::string bytes_;  // an incomplete UTF-8 character, 0..3 bytes
  std::string held_;   // valid text that may be the start of a stop string
  std::string candidate_;  // scratch of emit_into and finish
};

}  // namespace met
