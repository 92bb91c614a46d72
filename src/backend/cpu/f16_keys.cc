// F16 keys, tokens in lanes. Tested by tests/backend/kv_cache_test.cc.
#include "backend/cpu/f16_keys.h"

#include <cstring>

namespace met::cpu {

void put_f16_key(const uint8_t* row, int32_t head_dim, int32_t slot, uint8_t* head) {
  for (int32_t d = 0; d < head_dim; ++d) {
    std::memcpy(head + int64_t{d} * kF16KeyDimBytes + 2 * slot, row + 2 * d, sizeof(uint16_t));
  }
}

void get_f16_key(const uint8_t* head, int32_t head_dim, int32_t slot, uint8_t* row) {
  for (int32_t d = 0; d < head_dim; ++d) {
    std::memcpy(row + 2 * d, head + int64_t{d} * kF16KeyDimBytes + 2 * slot, sizeof(uint16_t));
  }
}

void copy_f16_key_slots(const uint8_t* from, int32_t head_dim, int32_t num_slots, uint8_t* to) {
  for (int32_t d = 0; d < head_dim; ++d) {
    const int64_t at = int64_t{d} * kF16KeyDimBytes;
    std::memcpy(to + at, from + at, static_cast<size_t>(2 * num_slots));
  }
}

}  // namespace met::cpu
