// EmbeddingsApi: POST /v1/embeddings in OpenAI's shape.
//   {"input": "text" | ["text", ...] | [ids] | [[ids], ...], "model": "...",
//    "encoding_format": "float" | "base64", "dimensions": N, "user": "..."}
//   -> {"object": "list", "data": [{"object": "embedding", "index": i,
//       "embedding": [floats] | "base64 of little-endian float32s"}],
//       "model": "...", "usage": {"prompt_tokens": P, "total_tokens": P}}
// Texts are tokenized with the vocab's special tokens added (BOS, or BERT's
// [CLS] ... [SEP], and an EOS where the vocab adds one, as a last-token
// embedding model expects); token arrays are taken as given. Each input is
// one engine request pooled the model's way (EmbeddingInfo::pooling, or the
// server's --pooling), run in the same steps as generation. Every vector is
// normalised to unit length, as OpenAI's are; `dimensions` keeps the first N
// values (Matryoshka truncation) and normalises again.
// Invariants: every error is a 400 naming its field (an input by its index).
// Threading: parse and format are const and pure; serve_embeddings runs on
// the connection's strand. Tested by tests/server/embeddings_api_test.cc and
// through `met serve` by tests/server/serve_embeddings_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "server/api_error.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace met {

// The most inputs one request may carry (OpenAI's limit).
inline constexpr size_t kMaxEmbeddingInputs = 2048;

struct EmbeddingsRequest {
  std::vector<std::vector<TokenId>> inputs;
  std::string model;
  bool base64 = false;
  std::optional<int32_t> dimensions;
};

// The body parsed and checked against the model (`hidden_size`: the
// vectors' width, which `dimensions` may not exceed).
ApiResult<EmbeddingsRequest> parse_embeddings_request(std::string_view body, const Tokenizer& tokenizer,
                                                     int32_t hidden_size);

// `v` cut to `dimensions` (when given) and scaled to unit length (a zero
// vector stays zero).
std::vector<float> finish_embedding(std::span<const float> v, std::optional<int32_t> dimensions);

// The response body for the inputs' vectors (already finished), in order.
nlohmann::ordered_json embeddings_body(const EmbeddingsRequest& r, std::span<const std::vector<float>> vectors,
                                       int32_t prompt_tokens, std::string_view model);

// Serves one /v1/embeddings request. REQUIRES: s.model() != nullptr.
awaitable<bool> serve_embeddings(ServerState& s, beast::tcp_stream& stream, const HttpRequest& req,
                                 const ExtraHeaders& headers);

}  // namespace met
