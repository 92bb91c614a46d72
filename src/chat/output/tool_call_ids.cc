// ToolCallIds: see tool_call_ids.h. Suffix letters come from splitmix64 over
// (seed, counter).
// Tested by tests/chat/tool_call_ids_test.cc.
#include "chat/output/tool_call_ids.h"

#include <string_view>

namespace met {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr int kSuffixChars = 24;

}  // namespace

std::string ToolCallIds::next() {
  std::string id = "call_";
  uint64_t state = splitmix64(seed_ ^ splitmix64(count_++));
  for (int i = 0; i < kSuffixChars; ++i) {
    if (i % 8 == 0) state = splitmix64(state);
    id += kAlphabet[(state >> (8 * (i % 8))) % kAlphabet.size()];
  }
  return id;
}

}  // namespace met
