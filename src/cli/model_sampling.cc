// model_sampling_defaults. Tested by tests/cli/model_sampling_test.cc.
#include "cli/model_sampling.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>

namespace met {
namespace {

// The key's value when present, a number, and within [lo, hi].
std::optional<float> recommended(const GgufMetadata& md, const char* key, float lo, float hi, ModelSampling& out) {
  if (!md.contains(key)) return std::nullopt;
  Result<float> v = md.get_f32(key);
  if (!v.ok()) {
    Result<int64_t> i = md.get_i64(key);
    if (!i.ok()) {
      out.warnings.push_back(fmt::format("{} is not a number; not used", key));
      return std::nullopt;
    }
    v = static_cast<float>(*i);
  }
  if (!std::isfinite(*v) || *v < lo || *v > hi) {
    out.warnings.push_back(fmt::format("{} = {} is outside [{}, {}]; not used", key, *v, lo, hi));
    return std::nullopt;
  }
  return *v;
}

void note(ModelSampling& out, const char* field, float value) {
  if (!out.described.empty()) out.described += ", ";
  out.described += fmt::format("{} {}", field, value);
  out.defaults.from_model = true;
}

}  // namespace

ModelSampling model_sampling_defaults(const GgufMetadata& md) {
  ModelSampling out;
  SamplingDefaults& d = out.defaults;
  if (auto v = recommended(md, "general.sampling.temp", 0.0f, 2.0f, out)) note(out, "temperature", d.temperature = *v);
  // top_p 0 would keep no token: (0, 1] as the API takes it.
  if (auto v = recommended(md, "general.sampling.top_p", 1e-6f, 1.0f, out)) note(out, "top_p", d.top_p = *v);
  if (auto v = recommended(md, "general.sampling.top_k", -1.0f, 1e9f, out)) {
    d.top_k = *v <= 0 ? 0 : static_cast<int32_t>(*v);  // 0 and -1: off
    note(out, "top_k", static_cast<float>(d.top_k));
  }
  if (auto v = recommended(md, "general.sampling.min_p", 0.0f, 1.0f, out)) note(out, "min_p", d.min_p = *v);
  if (auto v = recommended(md, "general.sampling.penalty_repeat", 1e-6f, 10.0f, out)) {
    note(out, "repetition_penalty", d.repetition_penalty = *v);
  }
  return out;
}

}  // namespace met
