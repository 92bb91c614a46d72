// Tokenizer throughput: encodes a few MB of English-like text (a built-in
// paragraph set, shuffled and varied with a fixed seed) with the llama-bpe
// (Llama 3) and qwen2 vocabs from ../shared/tokenizer-vectors, with the BPE
// cache on (the default) and off, and reports bytes per second. Also the
// synthetic byte-level vocab of `met make-model`, which needs no ../shared.
// Run: build-tok-rel/bench/tokenizer/met_tokenizer_bench
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "gguf/gguf_file.h"
#include "model/synthetic_vocab.h"
#include "testing/shared_data.h"
#include "tokenizer/incremental_detokenizer.h"
#include "tokenizer/tokenizer.h"

namespace met {
namespace {

constexpr size_t kTextBytes = 4 << 20;

const char* const kSentences[] = {
    "The committee met on Tuesday to review the proposal, which had been revised twice since March.",
    "Nobody expected the old bridge to hold, yet it carried traffic for another forty years.",
    "She said, \"We'll need at least 250 volunteers, and we haven't got half of them.\"",
    "In 1969, the first crewed landing on the Moon was watched by an estimated 650 million people.",
    "Prices rose by 3.2% in the third quarter, driven mostly by energy and housing costs.",
    "If you can't find the file, check the archive folder or ask the project lead.",
    "The river winds through the valley before it reaches the sea near the fishing village.",
    "Researchers at the university published their findings in a peer-reviewed journal.",
    "It's not the size of the dog in the fight, it's the size of the fight in the dog.",
    "Please send the signed contract back by Friday; otherwise the offer will expire.",
    "Our team's goal for the next release is to cut start-up time in half.",
    "Weather permitting, the festival will open at 10:30 a.m. with a parade downtown.",
    "He walked slowly along the beach, collecting shells and watching the waves roll in.",
    "The library's new wing houses more than 120,000 volumes and a small café.",
    "They'd rather wait for the train than drive through the snowstorm at night.",
    "Most modern processors execute several instructions per cycle when the code allows it.",
};

std::string english_text(size_t bytes) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<size_t> pick(0, std::size(kSentences) - 1);
  std::uniform_int_distribution<int> number(1, 99999);
  std::uniform_int_distribution<int> coin(0, 9);
  std::string text;
  text.reserve(bytes + 256);
  while (text.size() < bytes) {
    text += kSentences[pick(rng)];
    const int c = coin(rng);
    if (c == 0) text += " (" + std::to_string(number(rng)) + ")";
    text += c < 2 ? "\n\n" : " ";
  }
  return text;
}

const std::string& shared_text() {
  static const std::string text = english_text(kTextBytes);
  return text;
}

std::optional<Tokenizer> load_shared(const std::string& vocab, size_t cache_entries) {
  const auto path = testing::shared_path("tokenizer-vectors/ggml-vocab-" + vocab + ".gguf");
  if (!path) return std::nullopt;
  auto file = GgufFile::open(*path);
  if (!file.ok()) return std::nullopt;
  auto tokenizer = Tokenizer::from_gguf(file->metadata(), {.bpe_cache_entries = cache_entries});
  if (!tokenizer.ok()) return std::nullopt;
  return std::move(tokenizer).value();
}

void encode_loop(benchmark::State& state, const Tokenizer& tokenizer) {
  const std::string& text = shared_text();
  size_t tokens = 0;
  for (auto _ : state) {
    const auto ids = tokenizer.encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["bytes_per_token"] = static_cast<double>(text.size()) / static_cast<double>(tokens);
}

void BM_Encode(benchmark::State& state, const std::string& vocab, size_t cache_entries) {
  const std::optional<Tokenizer> tokenizer = load_shared(vocab, cache_entries);
  if (!tokenizer) {
    state.SkipWithError(("../shared/tokenizer-vectors/ggml-vocab-" + vocab + ".gguf is absent").c_str());
    return;
  }
  encode_loop(state, *tokenizer);
}

void BM_EncodeSyntheticBpe(benchmark::State& state) {
  SyntheticVocabOptions options;
  options.kind = VocabKind::kBpe;
  options.size = 32000;
  auto vocab = make_synthetic_vocab(options);
  if (!vocab.ok()) {
    state.SkipWithError(vocab.status().to_string().c_str());
    return;
  }
  GgufMetadata md;
  write_vocab_metadata(*vocab, md);
  auto tokenizer = Tokenizer::from_gguf(md);
  if (!tokenizer.ok()) {
    state.SkipWithError(tokenizer.status().to_string().c_str());
    return;
  }
  encode_loop(state, *tokenizer);
}

void BM_StreamDecode(benchmark::State& state) {
  const std::optional<Tokenizer> tokenizer = load_shared("llama-bpe", kDefaultBpeCacheEntries);
  if (!tokenizer) {
    state.SkipWithError("../shared/tokenizer-vectors/ggml-vocab-llama-bpe.gguf is absent");
    return;
  }
  const auto ids = tokenizer->encode(shared_text().substr(0, 1 << 20));
  for (auto _ : state) {
    IncrementalDetokenizer detok(*tokenizer, {.stop_strings = {"<|im_end|>", "\n\nUser:"}});
    size_t bytes = 0;
    for (TokenId id : ids) bytes += detok.push(id).text.size();
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * ids.size()));
}

BENCHMARK_CAPTURE(BM_Encode, llama_bpe, std::string("llama-bpe"), kDefaultBpeCacheEntries)
    ->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK_CAPTURE(BM_Encode, qwen2, std::string("qwen2"), kDefaultBpeCacheEntries)
    ->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK_CAPTURE(BM_Encode, llama_bpe_no_cache, std::string("llama-bpe"), size_t{0})
    ->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK_CAPTURE(BM_Encode, qwen2_no_cache, std::string("qwen2"), size_t{0})
    ->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_EncodeSyntheticBpe)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_StreamDecode)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace met

BENCHMARK_MAIN();
