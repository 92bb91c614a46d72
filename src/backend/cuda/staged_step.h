// The records of a staged step (plan_staging.h packs them; the device
// program reads them): plain structs of int32 fields, the same bytes on the
// host and on the device. C++17, so CUDA sources include it.
// Threading: plain data. Tested by tests/backend/plan_staging_test.cc.
#pragma once

#include <cstdint>

namespace met::cuda {

// Attention partitions cover positions [p P, (p + 1) P), P this many.
inline constexpr int32_t kAttnPartitionTokens = 256;
// A row's `feeds` entry when the host gave its token.
inline constexpr int32_t kNoFeed = -1;

struct PackedHeader {
  int32_t num_rows = 0;
  int32_t num_seqs = 0;
  int32_t num_outputs = 0;
  int32_t num_banned = 0;
  int32_t num_table_entries = 0;
  int32_t num_partitions = 0;
  int32_t num_fed_rows = 0;  // rows whose token comes from the previous step
  int32_t max_seq_len = 0;   // the longest num_cached + num_rows
};

struct PackedSeq {
  int32_t row_begin = 0;
  int32_t num_rows = 0;
  int32_t num_cached = 0;
  int32_t table_begin = 0;  // into the tables section
  int32_t num_blocks = 0;
  int32_t partition_begin = 0;  // into the partitions section
  int32_t num_partitions = 0;
  int32_t first_partition = 0;  // the absolute index of its first: positions from first_partition * P
};

struct PackedOutput {
  int32_t row = 0;
  int32_t kind = 0;  // OutputKind
  int32_t banned_begin = 0;
  int32_t num_banned = 0;
};

struct PackedPartition {
  int32_t seq = 0;
  int32_t index = 0;        // absolute: positions [index * P, (index + 1) * P) clipped to the seq
  int32_t token_begin = 0;  // the first position any row of the seq reads in it
  int32_t token_end = 0;    // one past the last position its last row reads in it
};

}  // namespace met::cuda
