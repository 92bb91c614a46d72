// Replacement global operator new and delete that count allocations.
#include "testing/allocation_counter.h"

#include <sys/prctl.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

thread_local int64_t t_num_allocations = 0;

// The name whose threads are counted (empty: none). Written before any such
// thread starts, read on every allocation.
char g_counted_name[16] = {};
std::atomic<bool> g_counting_named{false};
std::atomic<int64_t> g_num_named{0};

void count_one() {
  ++t_num_allocations;
  if (!g_counting_named.load(std::memory_order_acquire)) return;
  char name[16] = {};
  if (prctl(PR_GET_NAME, name) == 0 && std::strncmp(name, g_counted_name, sizeof(name)) == 0) {
    g_num_named.fetch_add(1, std::memory_order_relaxed);
  }
}

void* counted_alloc(std::size_t n) {
  count_one();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void* counted_aligned_alloc(std::size_t n, std::align_val_t align) {
  count_one();
  const auto a = static_cast<std::size_t>(align);
  const std::size_t rounded = (n + a - 1) / a * a;  // aligned_alloc wants a multiple
  if (void* p = std::aligned_alloc(a, rounded == 0 ? a : rounded)) return p;
  throw std::bad_alloc();
}

}  // namespace

namespace met::testing {

int64_t num_allocations() { return t_num_allocations; }

void count_allocations_on_threads_named(const char* name) {
  std::strncpy(g_counted_name, name, sizeof(g_counted_name) - 1);
  g_counting_named.store(true, std::memory_order_release);
}

int64_t num_named_thread_allocations() { return g_num_named.load(std::memory_order_relaxed); }

}  // namespace met::testing

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
// The nothrow forms too, so that every operator new of the binary pairs with
// the delete below (the sanitizers check that new and delete match).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  count_one();
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(std::size_t n, std::align_val_t align, const std::nothrow_t&) noexcept {
  count_one();
  const auto a = static_cast<std::size_t>(align);
  const std::size_t rounded = (n + a - 1) / a * a;
  return std::aligned_alloc(a, rounded == 0 ? a : rounded);
}
void* operator new[](std::size_t n, std::align_val_t align, const std::nothrow_t& t) noexcept {
  return operator new(n, align, t);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
