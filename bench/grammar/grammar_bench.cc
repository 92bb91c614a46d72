// Grammar masks: microseconds per decode step (fill_mask) for a realistic JSON
// Schema at the qwen2 vocab (151,936 tokens), replaying a realistic generation
// (a JSON instance tokenized by the model's own tokenizer), token by token.
//   Fresh/NoCache:   a new matcher per generation, mask cache off: every
//                    state's transitions and mask are computed from nothing.
//   Fresh/Cache:     a new matcher per generation, default options: what one
//                    request costs end to end.
//   Warm/NoCache:    one matcher reused (rollback to the start), mask cache
//                    off: transitions memoized, every mask walks the trie.
//   Warm/Cache:      one matcher reused with its mask cache: steady state.
// Counters: mask_us_per_step (mean) and max_step_us. Needs ../shared; skips
// with a message when the vocab is absent.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "gguf/gguf_file.h"
#include "grammar/grammar_matcher.h"
#include "grammar/json_schema.h"
#include "testing/shared_data.h"

namespace met {
namespace {

constexpr const char* kSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer", "minimum": 0, "maximum": 150},
    "email": {"type": "string", "format": "email"},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
    "address": {"type": "object", "properties": {
        "street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
      "required": ["street", "city"], "additionalProperties": false},
    "active": {"type": "boolean"}
  },
  "required": ["name", "age", "tags", "address"],
  "additionalProperties": false})";

constexpr const char* kInstance =
    "{\"name\": \"Ada Lovelace, Countess of Lovelace\", \"age\": 36, \"email\": \"ada@example.org\", "
    "\"tags\": [\"mathematician\", \"writer\", \"analytical engine\", \"poetical science\"], "
    "\"address\": {\"street\": \"12 St James's Square\", \"city\": \"London\", \"zip\": \"12345\"}, "
    "\"active\": false}";

struct Setup {
  std::optional<Tokenizer> tokenizer;
  std::optional<TokenTrie> trie;
  std::optional<Grammar> grammar;
  std::vector<TokenId> tokens;
};

const Setup& setup() {
  static const Setup kSetup = [] {
    Setup s;
    const auto path = testing::shared_path("tokenizer-vectors/ggml-vocab-qwen2.gguf");
    if (!path) return s;
    Result<GgufFile> file = GgufFile::open(*path);
    if (!file.ok()) return s;
    Result<Tokenizer> t = Tokenizer::from_gguf(file->metadata());
    if (!t.ok()) return s;
    s.tokenizer.emplace(std::move(t).value());
    s.trie.emplace(TokenTrie::build(*s.tokenizer));
    Result<Grammar> g = compile_json_schema(std::string_view(kSchema));
    if (!g.ok()) return s;
    s.grammar.emplace(std::move(g).value());
    s.tokens = s.tokenizer->encode(kInstance);
    return s;
  }();
  return kSetup;
}

// Replays the generation once; adds each fill_mask's microseconds.
bool replay(GrammarMatcher& m, std::vector<uint64_t>& mask, double& total_us, double& max_us) {
  for (TokenId t : setup().tokens) {
    const auto start = std::chrono::steady_clock::now();
    m.fill_mask(mask);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    total_us += us;
    max_us = std::max(max_us, us);
    if (((mask[static_cast<size_t>(t) / 64] >> (t % 64)) & 1) == 0 || !m.accept_token(t)) return false;
  }
  return m.is_accepting();
}

void run(benchmark::State& state, bool fresh, size_t cache_entries) {
  const Setup& s = setup();
  if (!s.grammar) {
    state.SkipWithError("../shared/tokenizer-vectors/ggml-vocab-qwen2.gguf is absent (or the schema failed)");
    return;
  }
  std::vector<uint64_t> mask(s.trie->mask_words());
  std::optional<GrammarMatcher> warm;
  if (!fresh) warm.emplace(*s.grammar, *s.trie, MatcherOptions{.mask_cache_entries = cache_entries});
  double total_us = 0, max_us = 0;
  size_t steps = 0;
  for (auto _ : state) {
    std::optional<GrammarMatcher> local;
    GrammarMatcher& m = fresh ? local.emplace(*s.grammar, *s.trie, MatcherOptions{.mask_cache_entries = cache_entries}) : *warm;
    if (!replay(m, mask, total_us, max_us)) {
      state.SkipWithError("the grammar rejected the instance's tokens");
      return;
    }
    steps += s.tokens.size();
    if (!fresh) m.rollback(m.num_steps());
  }
  state.counters["mask_us_per_step"] = total_us / static_cast<double>(steps);
  state.counters["max_step_us"] = max_us;
  state.counters["steps"] = static_cast<double>(s.tokens.size());
}

void BM_FreshNoCache(benchmark::State& state) { run(state, true, 0); }
void BM_FreshCache(benchmark::State& state) { run(state, true, MatcherOptions{}.mask_cache_entries); }
void BM_WarmNoCache(benchmark::State& state) { run(state, false, 0); }
void BM_WarmCache(benchmark::State& state) { run(state, false, MatcherOptions{}.mask_cache_entries); }

void BM_BuildTokenTrie(benchmark::State& state) {
  const Setup& s = setup();
  if (!s.tokenizer) {
    state.SkipWithError("../shared/tokenizer-vectors/ggml-vocab-qwen2.gguf is absent");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(TokenTrie::build(*s.tokenizer).nodes().size());
}

void BM_CompileSchema(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(compile_json_schema(std::string_view(kSchema)).ok());
}

BENCHMARK(BM_FreshNoCache)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_FreshCache)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_WarmNoCache)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_WarmCache)->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_BuildTokenTrie)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileSchema)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace met

BENCHMARK_MAIN();
