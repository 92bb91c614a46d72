// Counts this thread's calls of the global operator new, so a test can assert
// that a steady state allocates nothing. Linking allocation_counter.cc
// replaces the binary's global operator new and delete (with malloc and free
// underneath, so the sanitizers still see every allocation).
// Threading: the count is per thread.
#pragma once

#include <cstdint>

namespace met::testing {

int64_t num_allocations();

}  // namespace met::testing
