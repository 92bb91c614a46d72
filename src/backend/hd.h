// MET_HD marks a function that host and device code both call: under nvcc it
// is __host__ __device__, under a host compiler nothing. Headers that use it
// hold per-element math the CUDA backend shares with host code (the CPU
// backend or the host tests that check it against the CPU's references), so
// one definition is compiled by both compilers.
// Invariants: such headers include only what both compilers accept (no
// intrinsics, no std:: functions that are not constexpr or math).
// Threading: macros only. Tested through the headers that use it.
#pragma once

#if defined(__CUDACC__)
#define MET_HD __host__ __device__
#else
#define MET_HD
#endif
