// DevPort: the scheduler's `dev` port, the device as the scheduler sees it:
// what the model is, and forward steps launched and awaited. KV bookkeeping
// goes through the KV manager (kv/kv_manager.h), the `kv` port; the block
// bytes the device holds are reached only through it, for swapping.
// Threading: engine thread only. Tested through tests/scheduler/* over a
// FakeDevice.
#pragma once

#include "backend/device.h"

namespace met {

class DevPort {
 public:
  explicit DevPort(Device& device) : device_(device) {}

  const DeviceInfo& info() const { return device_.info(); }
  Result<Ticket> launch(const StepPlan& plan) { return device_.launch(plan); }
  Status await_result(Ticket ticket, StepResult& out) { return device_.await_result(ticket, out); }

 private:
  Device& device_;
};

}  // namespace met
