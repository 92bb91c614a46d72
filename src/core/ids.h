// Ids as distinct types (STYLE.md rule 9): a BlockId cannot be passed where a
// SeqId is meant, and no id has a -1 sentinel (use std::optional); the one
// reserved value, kReleasedBlock, is named and says below why it is one.
// TokenId stays a plain int32 alias: tokens are data, held in large arrays
// and exchanged with the tokenizer and the model as such.
// Threading: plain values. Tested by tests/core/ids_test.cc.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace met {

using TokenId = int32_t;

template <typename Tag, typename Rep>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;

 private:
  Rep v_{};
};

using BlockId = StrongId<struct BlockIdTag, int32_t>;   // a KV block of the pool
using SeqId = StrongId<struct SeqIdTag, uint64_t>;      // a sequence, unique per engine
using Ticket = StrongId<struct TicketTag, uint64_t>;    // a launched device step
using SpillId = StrongId<struct SpillIdTag, uint64_t>;    // a spill image of a swapped-out sequence
using RequestId = StrongId<struct RequestIdTag, uint64_t>;  // a request accepted by the engine
using StateSlotId = StrongId<struct StateSlotIdTag, int32_t>;  // a recurrent-state slot of the device

// A block-table entry whose block was given back because no attention window
// reaches its positions any more (kv/kv_manager.h, ReleaseBehindWindow). It
// names no block of any pool (pools check their ids). A reserved value, not
// an optional: block tables are flat arrays of ids the device reads as they
// are.
inline constexpr BlockId kReleasedBlock{std::numeric_limits<int32_t>::max()};

}  // namespace met

template <typename Tag, typename Rep>
struct std::hash<met::StrongId<Tag, Rep>> {
  size_t operator()(met::StrongId<Tag, Rep> id) const noexcept { return std::hash<Rep>{}(id.value()); }
};
