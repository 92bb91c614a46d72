// The built-in English text synthetic vocabularies learn their first merges
// from, so that random models tokenize English into word-like pieces.
// Threading: constant. Used by src/model/synthetic_vocab.cc.
#pragma once

#include <string_view>

namespace met {

std::string_view vocab_training_text();

}  // namespace met
