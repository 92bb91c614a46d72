// Sampler request fields. Tested by tests/server/sampling_fields_test.cc.
#include "server/sampling_fields.h"

#include <fmt/format.h>

#include <limits>
#include <string_view>

namespace met {
namespace {

using namespace json_fields;

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
constexpr size_t kMaxAllowedTokenIds = size_t{1} << 20;
constexpr size_t kMaxTextEntries = 256;

// A float field in [lo, hi] (or (lo, hi]) written to `out` when present.
MaybeError read_float(const Json& obj, const char* name, double lo, double hi, bool lo_open, float& out) {
  std::optional<double> v;
  MET_API_RETURN_IF_ERROR(read_number(obj, name, lo, hi, lo_open, v));
  if (v) out = static_cast<float>(*v);
  return std::nullopt;
}

MaybeError read_int32(const Json& obj, const char* name, int64_t lo, int64_t hi, int32_t& out) {
  std::optional<int64_t> v;
  MET_API_RETURN_IF_ERROR(read_int(obj, name, lo, hi, v));
  if (v) out = static_cast<int32_t>(*v);
  return std::nullopt;
}

// logit_bias: {"token id": bias in [-100, 100]}.
MaybeError read_logit_bias(const Json& obj, std::vector<LogitBias>& out) {
  const Json* v = field(obj, "logit_bias");
  if (v == nullptr) return std::nullopt;
  if (!v->is_object()) return wrong_type("logit_bias", "an object of token id to bias", *v);
  for (const auto& [key, bias] : v->items()) {
    char* end = nullptr;
    const long id = std::strtol(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || id < 0 || id > kMaxInt32) {
      return invalid_request("logit_bias", fmt::format("'logit_bias' key '{}' is not a token id", key));
    }
    if (!bias.is_number() || !(bias.get<double>() >= -100.0 && bias.get<double>() <= 100.0)) {
      return invalid_request("logit_bias", fmt::format("'logit_bias' of token {} must be a number in [-100, 100]", key));
    }
    out.push_back(LogitBias{.token = static_cast<TokenId>(id), .bias = bias.get<float>()});
  }
  return std::nullopt;
}

MaybeError read_core(const Json& obj, SamplingParams& s) {
  MET_API_RETURN_IF_ERROR(read_float(obj, "temperature", 0.0, 2.0, false, s.temperature));
  MET_API_RETURN_IF_ERROR(read_float(obj, "top_p", 0.0, 1.0, true, s.top_p));
  std::optional<int64_t> top_k;
  MET_API_RETURN_IF_ERROR(read_int(obj, "top_k", -1, kMaxInt32, top_k));
  if (top_k) s.top_k = *top_k < 0 ? 0 : static_cast<int32_t>(*top_k);  // -1: off, as vLLM
  if (const Json* seed = field(obj, "seed")) {
    if (!seed->is_number_integer()) return wrong_type("seed", "an integer", *seed);
    s.seed = seed->is_number_unsigned() ? seed->get<uint64_t>() : static_cast<uint64_t>(seed->get<int64_t>());
  }
  MET_API_RETURN_IF_ERROR(read_float(obj, "min_p", 0.0, 1.0, false, s.min_p));
  MET_API_RETURN_IF_ERROR(read_float(obj, "typical_p", 0.0, 1.0, true, s.typical_p));
  MET_API_RETURN_IF_ERROR(read_float(obj, "top_n_sigma", 0.0, 100.0, false, s.top_n_sigma));
  MET_API_RETURN_IF_ERROR(read_float(obj, "xtc_probability", 0.0, 1.0, false, s.xtc_probability));
  MET_API_RETURN_IF_ERROR(read_float(obj, "xtc_threshold", 0.0, 1.0, false, s.xtc_threshold));
  return read_bool(obj, "adaptive_temperature", s.adaptive_temperature);
}

MaybeError read_penalties(const Json& obj, SamplingParams& s, SamplingText& text) {
  MET_API_RETURN_IF_ERROR(read_float(obj, "presence_penalty", -2.0, 2.0, false, s.presence_penalty));
  MET_API_RETURN_IF_ERROR(read_float(obj, "frequency_penalty", -2.0, 2.0, false, s.frequency_penalty));
  MET_API_RETURN_IF_ERROR(read_float(obj, "repetition_penalty", 0.0, 10.0, true, s.repetition_penalty));
  MET_API_RETURN_IF_ERROR(read_int32(obj, "repetition_penalty_window", 0, 1 << 20, s.repetition_penalty_window));
  MET_API_RETURN_IF_ERROR(read_float(obj, "dry_multiplier", 0.0, 100.0, false, s.dry_multiplier));
  MET_API_RETURN_IF_ERROR(read_float(obj, "dry_base", 1.0, 100.0, true, s.dry_base));
  MET_API_RETURN_IF_ERROR(read_int32(obj, "dry_allowed_length", 1, 1 << 16, s.dry_allowed_length));
  MET_API_RETURN_IF_ERROR(read_string_array(obj, "dry_sequence_breakers", kMaxTextEntries, text.dry_sequence_breakers));
  MET_API_RETURN_IF_ERROR(read_float(obj, "lz_penalty", 0.0, 100.0, false, s.lz_penalty));
  MET_API_RETURN_IF_ERROR(read_int32(obj, "lz_window", 2, 4096, s.lz_window));
  MET_API_RETURN_IF_ERROR(read_int32(obj, "lz_buffer", 1, 256, s.lz_buffer));
  return std::nullopt;
}

MaybeError read_bans(const Json& obj, SamplingParams& s, SamplingText& text) {
  MET_API_RETURN_IF_ERROR(read_logit_bias(obj, s.logit_bias));
  std::optional<std::vector<int64_t>> allowed;
  MET_API_RETURN_IF_ERROR(read_int_array(obj, "allowed_token_ids", 0, kMaxInt32, kMaxAllowedTokenIds, allowed));
  if (allowed) {
    if (allowed->empty()) return invalid_request("allowed_token_ids", "'allowed_token_ids' must not be empty");
    s.allowed_token_ids.emplace(allowed->begin(), allowed->end());
  }
  MET_API_RETURN_IF_ERROR(read_string_array(obj, "bad_words", kMaxTextEntries, text.bad_words));
  for (const std::string& w : text.bad_words) {
    if (w.empty()) return invalid_request("bad_words", "'bad_words' must not hold an empty string");
  }
  return std::nullopt;
}

// The field a validate_sampling message opens with ("lz_buffer 40 must ...").
std::string field_of(std::string_view message) {
  const size_t end = message.find_first_of(" :");
  return std::string(message.substr(0, end));
}

}  // namespace

MaybeError read_sampling_fields(const Json& obj, SamplingParams& s, SamplingText& text, SamplingGiven& given) {
  given.temperature = field(obj, "temperature") != nullptr;
  given.top_p = field(obj, "top_p") != nullptr;
  given.top_k = field(obj, "top_k") != nullptr;
  given.min_p = field(obj, "min_p") != nullptr;
  given.repetition_penalty = field(obj, "repetition_penalty") != nullptr;
  MET_API_RETURN_IF_ERROR(read_core(obj, s));
  MET_API_RETURN_IF_ERROR(read_penalties(obj, s, text));
  MET_API_RETURN_IF_ERROR(read_bans(obj, s, text));
  // What only the fields together decide (e.g. lz_buffer < lz_window).
  if (Status st = validate_sampling(s); !st.ok()) return invalid_request(field_of(st.message()), st.message());
  return std::nullopt;
}

void apply_sampling_defaults(const SamplingDefaults& d, const SamplingGiven& given, SamplingParams& s) {
  if (!given.temperature) s.temperature = d.temperature;
  if (!given.top_p) s.top_p = d.top_p;
  if (!given.top_k) s.top_k = d.top_k;
  if (!given.min_p) s.min_p = d.min_p;
  if (!given.repetition_penalty) s.repetition_penalty = d.repetition_penalty;
}

}  // namespace met
