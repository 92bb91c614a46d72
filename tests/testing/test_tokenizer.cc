// test_tokenizer().
#include "testing/test_tokenizer.h"

#include <memory>

#include "core/check.h"
#include "gguf/gguf_file.h"
#include "model/random_model.h"
#include "testing/temp_dir.h"

namespace met::testing {
namespace {

struct Holder {
  TempDir dir;
  std::string path;
  std::unique_ptr<Tokenizer> tokenizer;

  Holder() {
    path = dir.file("tiny.gguf");
    RandomModelSpec spec;
    spec.num_layers = 1;
    spec.embedding_length = 64;
    spec.num_heads = 2;
    spec.num_kv_heads = 1;
    spec.feed_forward_length = 128;
    spec.vocab_size = 512;
    spec.context_length = 512;
    spec.tokenizer = VocabKind::kSpm;
    Result<RandomModelSummary> made = make_random_model(spec, path);
    MET_CHECK(made.ok(), "{}", made.status().message());
    Result<GgufFile> f = GgufFile::open(path);
    MET_CHECK(f.ok(), "{}", f.status().message());
    Result<Tokenizer> t = Tokenizer::from_gguf(f->metadata());
    MET_CHECK(t.ok(), "{}", t.status().message());
    tokenizer = std::make_unique<Tokenizer>(std::move(*t));
  }
};

Holder& holder() {
  static Holder h;
  return h;
}

}  // namespace

const Tokenizer& test_tokenizer() { return *holder().tokenizer; }
const std::string& test_model_path() { return holder().path; }

}  // namespace met::testing
