// hf_tokenizer: a Hugging Face tokenizer.json (with tokenizer_config.json)
// converted to the `tokenizer.ggml.*` GGUF metadata met's Vocab reads, so one
// tokenizer implementation serves a folder and its converted GGUF alike.
// Two BPE families, WordPiece and Unigram are converted:
//  - SentencePiece-style BPE over "▁" text (Llama 2, Mistral, TinyStories):
//    model "llama", the merges kept (met merges by their rank; llama.cpp,
//    which reads only scores, gets -rank scores), add_space_prefix from a
//    Prepend("▁") normalizer or a Metaspace pre-tokenizer, byte_fallback's
//    <0xNN> tokens typed BYTE;
//  - byte-level BPE (Llama 3, Qwen2/3): model "gpt2", `tokenizer.ggml.pre`
//    found by comparing the Split regexes with met's known pre-tokenizers
//    (an NFC normalizer is accepted and, as llama.cpp does, not applied).
//  - WordPiece (BERT): model "bert" in llama.cpp's form (word-initial pieces
//    "▁"-prefixed, "##" dropped from continuations), BertNormalizer's
//    lowercase/strip_accents, [CLS] as BOS and [SEP] added after the text.
//  - Unigram (T5, ALBERT, XLM-R, mT5): model "t5" as llama.cpp's converter
//    writes it: the pieces' scores, unk_id's token UNKNOWN, <0xNN> pieces
//    BYTE under byte_fallback; the Precompiled normalizer's charsmap
//    (base64 of the bytes `tokenizer.ggml.precompiled_charsmap` holds);
//    remove_extra_whitespaces from a Replace(" {2,}") normalizer or a
//    WhitespaceSplit pre-tokenizer (a Strip normalizer only beside one);
//    add_space_prefix from the Metaspace pre-tokenizer's prepend_scheme or
//    add_prefix_space ("first" is taken as "always": llama.cpp prefixes
//    every fragment between special tokens). An NFKC normalizer is accepted
//    only beside a charsmap, which carries the normalization.
// Added tokens are CONTROL when special (USER_DEFINED otherwise), the unk
// token UNKNOWN; ids the files leave out up to config's vocab_size become
// "[PAD<id>]" UNUSED tokens, as llama.cpp's converter pads. Special ids,
// add_bos/add_eos and `chat_template` come from tokenizer_config.json (the
// post-processor's template decides add_bos/add_eos when it is silent).
// Other models, and normalizers or pre-tokenizers other than these, are
// refused with an error naming what was found.
// Threading: pure. Tested by tests/hf/hf_tokenizer_test.cc.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.h"
#include "gguf/gguf_value.h"

namespace met {

// `tokenizer_config_json` is "" when the folder has no tokenizer_config.json;
// `vocab_size` is config.json's (0: the tokenizer's own size).
Status add_hf_tokenizer_metadata(std::string_view tokenizer_json, std::string_view tokenizer_config_json,
                                 uint32_t vocab_size, GgufMetadata& md);

}  // namespace met
