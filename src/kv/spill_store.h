// SpillStore: the SpillIo that keeps each spill image in its own file,
// dir/met-spill-<pid>-<id>.kv, written under a ".tmp" name and renamed into
// place, so a reader never sees a half-written image under the final name.
// File format (all little-endian), a fixed header then the payload:
//   offset  0  magic "METSPILL" (8 bytes)
//           8  u32 version (2)
//          12  u32 num_blocks
//          16  u32 dtype (GgmlType value)
//          20  i32 num_layers, 24 i32 num_kv_heads, 28 i32 head_dim
//          32  i64 block_bytes
//          40  i64 state_bytes (a recurrent model's state slot; 0: none)
//          48  u64 checksum: XXH3-64 of bytes [0, 48) followed by the payload
//          56  payload: num_blocks * block_bytes bytes, then state_bytes
// Images are not fsynced: they live only as long as the process that wrote
// them (the pid in the name keeps two servers sharing a directory apart).
// Invariants: the destructor removes every image this store saved and did not
// remove, so a clean shutdown leaves no files; open() never returns bytes that
// fail any check of the header, the size or the checksum.
// Threading: one thread at a time (the engine thread).
// Tested by tests/kv/spill_store_test.cc.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <unordered_set>

#include "core/ids.h"
#include "core/status.h"
#include "kv/spill_io.h"

namespace met {

inline constexpr int64_t kSpillHeaderBytes = 56;

class SpillStore final : public SpillIo {
 public:
  // Creates `dir` if it is missing. Fails, naming the path, when it cannot be
  // created or is not a writable directory (probed by creating a file).
  static Result<std::unique_ptr<SpillStore>> create(const std::filesystem::path& dir);
  ~SpillStore() override;
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;

  Status save(SpillId id, const SpillImage& image) override;
  Status open(SpillId id, const KvShape& expected, SpillImage& out) override;
  Status remove(SpillId id) override;

  // The file that holds (or would hold) image `id`.
  std::filesystem::path path_of(SpillId id) const;

 private:
  SpillStore(std::filesystem::path dir, int64_t pid);

  std::filesystem::path dir_;
  int64_t pid_;
  std::unordered_set<SpillId> saved_;  // saved by this store and not yet removed
};

}  // namespace met
