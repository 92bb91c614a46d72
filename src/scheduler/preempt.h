// Preemption decisions: which running sequence gives up its KV when the pool
// runs dry. The latest admitted sequence that is not immune goes first; a
// just-resumed sequence is immune for PREEMPT_IMMUNITY_TOKENS tokens (so two
// sequences cannot evict each other forever) unless no other row is eligible.
// Threading: pure. Tested by tests/scheduler/preempt_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace met {

inline constexpr size_t PREEMPT_IMMUNITY_TOKENS = 32;

enum class PreemptMode : uint8_t {
  kSwap,       // save the victim's KV to a spill image; resume it from there
  kRecompute,  // drop the victim's KV; prefill it again from its tokens
};

struct VictimCandidate {
  uint64_t admit_order = 0;           // larger: admitted later
  size_t num_output_tokens = 0;
  size_t immune_until_tokens = 0;     // immune while num_output_tokens < this
};

// The index of the victim, or nullopt for no candidates.
std::optional<size_t> choose_decode_victim(std::span<const VictimCandidate> candidates);

}  // namespace met
