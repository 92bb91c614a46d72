// Pooling. Tested by tests/core/pooling_test.cc.
#include "core/pooling.h"

#include <array>

namespace met {
namespace {

constexpr std::array<Pooling, 4> kAll = {Pooling::kNone, Pooling::kMean, Pooling::kCls, Pooling::kLast};

}  // namespace

std::optional<Pooling> pooling_from_gguf(uint32_t value) {
  if (value >= kAll.size()) return std::nullopt;
  return kAll[value];
}

std::string_view pooling_name(Pooling p) {
  switch (p) {
    case Pooling::kNone: return "none";
    case Pooling::kMean: return "mean";
    case Pooling::kCls: return "cls";
    case Pooling::kLast: return "last";
  }
  return "?";
}

std::optional<Pooling> parse_pooling(std::string_view name) {
  for (Pooling p : kAll) {
    if (pooling_name(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace met
