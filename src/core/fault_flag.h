// The process-wide fault flag (STYLE.md rule 10: the one global mutable
// state). A device error that leaves the device's state unknown marks the
// process faulted; from then on every request is answered with an error and
// the engine shuts down in order. Sticky: set once, never cleared (tests use
// ScopedFaultReset). Threading: any thread may set or read it.
// Tested by tests/core/fault_flag_test.cc.
#pragma once

#include <string>

namespace met {

// Marks the process faulted; the first reason given is kept.
void set_fault(const std::string& reason);
bool is_faulted();
std::string fault_reason();  // "" while not faulted

// Tests only: clears the flag when the scope starts and ends.
class ScopedFaultReset {
 public:
  ScopedFaultReset();
  ~ScopedFaultReset();
  ScopedFaultReset(const ScopedFaultReset&) = delete;
  ScopedFaultReset& operator=(const ScopedFaultReset&) = delete;
};

}  // namespace met
