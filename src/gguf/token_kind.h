// TokenKind: llama.cpp's token types (tokenizer.ggml.token_type), as a GGUF
// stores them; the one enum for the tokenizer that reads them and the model
// maker that writes them.
// Threading: plain values. Tested through tests/tokenizer/vocab_test.cc and
// tests/model/synthetic_vocab_test.cc.
#pragma once

#include <cstdint>

namespace met {

enum class TokenKind : uint8_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

}  // namespace met
