// Logprobs JSON. Tested by tests/server/logprobs_json_test.cc.
#include "server/logprobs_json.h"

#include <cmath>
#include <string>
#include <string_view>

namespace met {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kMinLogprob = -9999.0;

double finite_logprob(float lp) { return std::isfinite(lp) ? static_cast<double>(lp) : kMinLogprob; }

std::string_view piece(const Tokenizer& tokenizer, TokenId id) { return tokenizer.token_to_piece(id, false); }

Json bytes_json(std::string_view s) {
  Json arr = Json::array();
  for (char c : s) arr.push_back(static_cast<int>(static_cast<unsigned char>(c)));
  return arr;
}

Json chat_entry(const Tokenizer& tokenizer, TokenId id, float logprob) {
  const std::string_view p = piece(tokenizer, id);
  Json j;
  j["token"] = std::string(p);
  j["logprob"] = finite_logprob(logprob);
  j["bytes"] = bytes_json(p);
  return j;
}

// Code points in `s`: every byte that does not continue a UTF-8 sequence.
size_t code_points(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

}  // namespace

Json chat_logprobs_json(std::span<const TokenLogprob> entries, const Tokenizer& tokenizer) {
  Json content = Json::array();
  for (const TokenLogprob& e : entries) {
    Json j = chat_entry(tokenizer, e.token, e.logprob);
    Json top = Json::array();
    for (const TopLogprob& t : e.top) top.push_back(chat_entry(tokenizer, t.token, t.logprob));
    j["top_logprobs"] = std::move(top);
    content.push_back(std::move(j));
  }
  Json out;
  out["content"] = std::move(content);
  return out;
}

Json completion_logprobs_json(std::span<const TokenLogprob> entries, const Tokenizer& tokenizer,
                              size_t& text_offset) {
  Json tokens = Json::array(), token_logprobs = Json::array(), top_logprobs = Json::array(),
       offsets = Json::array();
  for (const TokenLogprob& e : entries) {
    const std::string p(piece(tokenizer, e.token));
    tokens.push_back(p);
    token_logprobs.push_back(finite_logprob(e.logprob));
    Json top = Json::object();
    for (const TopLogprob& t : e.top) top[std::string(piece(tokenizer, t.token))] = finite_logprob(t.logprob);
    if (!top.contains(p)) top[p] = finite_logprob(e.logprob);
    top_logprobs.push_back(std::move(top));
    offsets.push_back(text_offset);
    text_offset += code_points(p);
  }
  Json out;
  out["tokens"] = std::move(tokens);
  out["token_logprobs"] = std::move(token_logprobs);
  out["top_logprobs"] = std::move(top_logprobs);
  out["text_offset"] = std::move(offsets);
  return out;
}

Json prompt_logprobs_json(std::span<const TokenLogprob> entries, const Tokenizer& tokenizer) {
  auto scored = [&](TokenId id, float logprob, int32_t rank) {
    Json j;
    j["logprob"] = finite_logprob(logprob);
    j["rank"] = rank;
    j["decoded_token"] = std::string(piece(tokenizer, id));
    return j;
  };
  Json out = Json::array({nullptr});
  for (const TokenLogprob& e : entries) {
    Json m = Json::object();
    m[std::to_string(e.token)] = scored(e.token, e.logprob, e.rank);
    for (size_t i = 0; i < e.top.size(); ++i) {
      const std::string key = std::to_string(e.top[i].token);
      if (!m.contains(key)) m[key] = scored(e.top[i].token, e.top[i].logprob, static_cast<int32_t>(i + 1));
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace met
