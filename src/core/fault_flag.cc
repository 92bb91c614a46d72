// The fault flag. Tested by tests/core/fault_flag_test.cc.
#include "core/fault_flag.h"

#include <atomic>

#include "core/log.h"
#include "core/mutex.h"

namespace met {
namespace {

std::atomic<bool> g_faulted{false};
Mutex g_reason_mu;
std::string g_reason GUARDED_BY(g_reason_mu);

void clear_fault() {
  MutexLock lock(g_reason_mu);
  g_reason.clear();
  g_faulted.store(false, std::memory_order_release);
}

}  // namespace

void set_fault(const std::string& reason) {
  {
    MutexLock lock(g_reason_mu);
    if (g_faulted.load(std::memory_order_acquire)) return;
    g_reason = reason;
    g_faulted.store(true, std::memory_order_release);
  }
  MET_LOG_ERROR("process faulted: {}", reason);
}

bool is_faulted() { return g_faulted.load(std::memory_order_acquire); }

std::string fault_reason() {
  MutexLock lock(g_reason_mu);
  return g_reason;
}

ScopedFaultReset::ScopedFaultReset() { clear_fault(); }
ScopedFaultReset::~ScopedFaultReset() { clear_fault(); }

}  // namespace met
