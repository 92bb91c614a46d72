// Counts calls of the global operator new, so a test can assert that a steady
// state allocates nothing: this thread's calls, and the calls made on threads
// that carry a given name (the engine names its thread "met-engine").
// Linking allocation_counter.cc replaces the binary's global operator new
// and delete (with malloc and free underneath, so the sanitizers still see
// every allocation).
// Threading: num_allocations is per thread; the named count is shared.
#pragma once

#include <cstdint>

namespace met::testing {

int64_t num_allocations();

// From now on, allocations on threads named `name` (at most 15 bytes, as
// Linux keeps thread names) are counted in num_named_thread_allocations().
void count_allocations_on_threads_named(const char* name);
int64_t num_named_thread_allocations();

}  // namespace met::testing
