// Tests TokenTrie: preorder layout, shared byte strings, EOG and control
// tokens, and the pieces of a real vocab (SentencePiece byte tokens).
#include "grammar/token_trie.h"

#include <gtest/gtest.h>

#include "gguf/gguf_file.h"
#include "testing/shared_data.h"

namespace met {
namespace {

TEST(TokenTrie, LaysTokensOutInPreorderWithSubtreeEnds) {
  const TokenTrie t = TokenTrie::from_pieces({"ab", "a", "b", "ab", "", "x"}, {5});
  EXPECT_EQ(t.vocab_size(), 6u);
  EXPECT_EQ(t.mask_words(), 1u);
  // root, a, ab, b  (x is EOG: no bytes)
  ASSERT_EQ(t.nodes().size(), 4u);
  EXPECT_EQ(t.nodes()[0].subtree_end, 4u);
  EXPECT_EQ(t.nodes()[1].byte, 'a');
  EXPECT_EQ(t.nodes()[1].subtree_end, 3u);
  EXPECT_EQ(t.nodes()[2].num_tokens, 2);  // "ab" twice
  EXPECT_TRUE(t.is_eog(5));
  EXPECT_EQ(t.bytes(5), "");
  EXPECT_EQ(t.bytes(0), "ab");
}

TEST(TokenTrie, SentencePieceByteTokensAreTheirByte) {
  MET_REQUIRE_SHARED(path, "tokenizer-vectors/ggml-vocab-llama-spm.gguf");
  Result<GgufFile> file = GgufFile::open(path);
  ASSERT_TRUE(file.ok());
  Result<Tokenizer> tok = Tokenizer::from_gguf(file->metadata());
  ASSERT_TRUE(tok.ok());
  const TokenTrie t = TokenTrie::build(*tok);
  const std::optional<TokenId> newline = tok->vocab().find("<0x0A>");
  ASSERT_TRUE(newline.has_value());
  EXPECT_EQ(t.bytes(*newline), "\n");
  EXPECT_EQ(t.bytes(*tok->vocab().special().bos), "");  // control
  EXPECT_TRUE(t.is_eog(*tok->vocab().special().eos));
}

}  // namespace
}  // namespace met
