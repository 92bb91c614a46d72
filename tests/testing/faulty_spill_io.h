// FaultySpillIo: wraps a SpillIo and fails a chosen call (LevelDB's
// fault-injection Env, for spill images). Counts every call and records the
// size of each image saved.
// Threading: one thread. Never linked into apps/.
#pragma once

#include <optional>
#include <vector>

#include "kv/spill_io.h"

namespace met::testing {

enum class SpillCall { kSave, kOpen, kRemove };

class FaultySpillIo final : public SpillIo {
 public:
  explicit FaultySpillIo(SpillIo& base) : base_(base) {}

  Status save(SpillId id, const SpillImage& image) override {
    MET_RETURN_IF_ERROR(count(SpillCall::kSave));
    saved_num_blocks_.push_back(image.num_blocks);
    return base_.save(id, image);
  }
  Status open(SpillId id, const KvShape& expected, SpillImage& out) override {
    MET_RETURN_IF_ERROR(count(SpillCall::kOpen));
    return base_.open(id, expected, out);
  }
  Status remove(SpillId id) override {
    MET_RETURN_IF_ERROR(count(SpillCall::kRemove));
    return base_.remove(id);
  }

  // The n-th call (0-based, all kinds) fails.
  void fail_call(int64_t n) { fail_at_ = n; }
  int64_t num_calls() const { return num_calls_; }
  // SpillImage::num_blocks of each image passed to save, in order.
  const std::vector<int32_t>& saved_num_blocks() const { return saved_num_blocks_; }

 private:
  Status count(SpillCall) {
    const int64_t n = num_calls_++;
    if (fail_at_ && *fail_at_ == n) return io_error("injected spill failure (call {})", n);
    return ok_status();
  }

  SpillIo& base_;
  std::optional<int64_t> fail_at_;
  int64_t num_calls_ = 0;
  std::vector<int32_t> saved_num_blocks_;
};

}  // namespace met::testing
