// MET_MAC_ROUNDS, the loop compute_peak_avx512.cc, compute_peak_avxvnni.cc and compute_peak_avx2.cc
// time: `iterations` rounds of one instruction on 12 accumulators of type T
// (each `x = step(x)`), kept in registers across rounds by an empty asm that
// reads and writes them, so the compiler neither spills nor folds them and
// the rounds measure throughput. A macro, expanded in each tier's file with
// that file's ISA flags.
// Threading: none (code only). Tested by tests/backend/compute_peak_test.cc.
#pragma once

#define MET_MAC_ROUNDS(T, init, step)                                                                    \
  T x0 = init, x1 = init, x2 = init, x3 = init, x4 = init, x5 = init;                                     \
  T x6 = init, x7 = init, x8 = init, x9 = init, x10 = init, x11 = init;                                   \
  for (int64_t i = 0; i < iterations; ++i) {                                                              \
    {T& x = x0; step;} {T& x = x1; step;} {T& x = x2; step;} {T& x = x3; step;}                          \
    {T& x = x4; step;} {T& x = x5; step;} {T& x = x6; step;} {T& x = x7; step;}                          \
    {T& x = x8; step;} {T& x = x9; step;} {T& x = x10; step;} {T& x = x11; step;}                        \
    asm volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3), "+v"(x4), "+v"(x5), "+v"(x6), "+v"(x7),     \
                 "+v"(x8), "+v"(x9), "+v"(x10), "+v"(x11));                                               \
  }
