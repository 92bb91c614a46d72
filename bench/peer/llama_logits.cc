// llama_logits: llama.cpp's half of bench/peer/crosscheck.sh. Loads a GGUF
// with libllama (CPU, default context settings but for KV_TYPE, F16 unless
// given, and FA: auto lets llama.cpp choose flash attention, which it does on
// the CPU and which computes in F16 even over an F32 cache; off is the F32
// path), decodes the given token ids as one batch of one
// sequence at positions 0, 1, … with logits for every position, and writes
// them as raw little-endian float32, row after row (tokens × vocab), the
// layout met_logits writes.
//   llama_logits MODEL.gguf 1,2,3 llama.f32 [THREADS [KV_TYPE [FA]]]
// No BOS is added and no tokenizer is used: the ids go in as given.
// Built against a llama.cpp build by build_llama_logits.sh, never by met's
// CMake or CI. Threading: the main thread (libllama runs its own).
// Tested by use (crosscheck.sh).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llama.h"

namespace {

std::vector<llama_token> parse_tokens(const std::string& csv) {
  std::vector<llama_token> tokens;
  size_t begin = 0;
  while (begin < csv.size()) {
    size_t end = csv.find(',', begin);
    if (end == std::string::npos) end = csv.size();
    tokens.push_back(static_cast<llama_token>(std::strtol(csv.substr(begin, end - begin).c_str(), nullptr, 10)));
    begin = end + 1;
  }
  return tokens;
}

// Keeps libllama's warnings and errors; drops its info chatter.
void log_errors_only(ggml_log_level level, const char* text, void* /*user_data*/) {
  if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) std::fputs(text, stderr);
}

int fail(const char* what) {
  std::fprintf(stderr, "llama_logits: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 7) {
    std::fprintf(stderr, "usage: %s MODEL.gguf TOKEN,TOKEN,... OUT.f32 [THREADS [f16|f32 [auto|on|off]]]\n", argv[0]);
    return 2;
  }
  const std::vector<llama_token> tokens = parse_tokens(argv[2]);
  const int threads = argc >= 5 ? std::atoi(argv[4]) : 2;
  const std::string kv_type = argc >= 6 ? argv[5] : "f16";
  if (kv_type != "f16" && kv_type != "f32") return fail("KV_TYPE is f16 or f32");
  const std::string fa = argc == 7 ? argv[6] : "auto";
  if (fa != "auto" && fa != "on" && fa != "off") return fail("FA is auto, on or off");
  if (tokens.empty()) return fail("no tokens");
  const int32_t n = static_cast<int32_t>(tokens.size());

  llama_log_set(log_errors_only, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (model == nullptr) return fail("the model did not load");
  const int32_t vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  for (llama_token t : tokens) {
    if (t < 0 || t >= vocab) return fail("a token is outside the vocabulary");
  }

  llama_context_params cp = llama_context_default_params();
  // The model's training context, as llama.cpp's default (-c 0) takes it and
  // met runs: phi3's LongRoPE picks its factors by the context (a context of
  // just the tokens would make llama.cpp use the short ones).
  cp.n_ctx = static_cast<uint32_t>(std::max<int64_t>(n, llama_model_n_ctx_train(model)));
  cp.n_batch = static_cast<uint32_t>(n);
  cp.n_ubatch = static_cast<uint32_t>(n);
  cp.n_seq_max = 1;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  cp.no_perf = true;
  cp.type_k = kv_type == "f32" ? GGML_TYPE_F32 : GGML_TYPE_F16;
  cp.type_v = cp.type_k;
  cp.flash_attn_type = fa == "on"    ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                       : fa == "off" ? LLAMA_FLASH_ATTN_TYPE_DISABLED
                                     : LLAMA_FLASH_ATTN_TYPE_AUTO;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (ctx == nullptr) return fail("the context was not created");

  llama_batch batch = llama_batch_init(n, 0, 1);
  for (int32_t i = 0; i < n; ++i) {
    batch.token[i] = tokens[static_cast<size_t>(i)];
    batch.pos[i] = i;
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = 0;
    batch.logits[i] = 1;
  }
  batch.n_tokens = n;
  if (llama_decode(ctx, batch) != 0) return fail("llama_decode failed");

  std::FILE* f = std::fopen(argv[3], "wb");
  if (f == nullptr) return fail("cannot open the output file");
  for (int32_t i = 0; i < n; ++i) {
    const float* row = llama_get_logits_ith(ctx, i);
    const size_t count = static_cast<size_t>(vocab);
    if (row == nullptr || std::fwrite(row, sizeof(float), count, f) != count) {
      std::fclose(f);
      return fail("no logits for a position, or a short write");
    }
  }
  if (std::fclose(f) != 0) return fail("short write");
  llama_batch_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
