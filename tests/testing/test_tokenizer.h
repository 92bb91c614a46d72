// test_tokenizer(): a small SentencePiece-style tokenizer from a random model
// made once per test process (512 tokens, with BOS, EOS and byte tokens), for
// scheduler and engine tests that need a detokenizer but no real model.
// Threading: call from one thread first; then read-only.
#pragma once

#include "tokenizer/tokenizer.h"

namespace met::testing {

const Tokenizer& test_tokenizer();
// The path of the tiny random model behind it (1 layer, f32).
const std::string& test_model_path();

}  // namespace met::testing
