// Tests for core/fault_flag.h.
#include "core/fault_flag.h"

#include <gtest/gtest.h>

namespace met {
namespace {

TEST(FaultFlag, IsClearUntilSetAndKeepsTheFirstReason) {
  ScopedFaultReset reset;
  EXPECT_FALSE(is_faulted());
  EXPECT_EQ(fault_reason(), "");
  set_fault("device lost");
  set_fault("a later fault");
  EXPECT_TRUE(is_faulted());
  EXPECT_EQ(fault_reason(), "device lost");
}

TEST(FaultFlag, ScopedResetClearsItAtTheEnd) {
  {
    ScopedFaultReset reset;
    set_fault("x");
  }
  EXPECT_FALSE(is_faulted());
}

}  // namespace
}  // namespace met
