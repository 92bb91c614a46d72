// The AMX tile unit as the AMX matmul driver (matmul_x16_amx.h) sees it:
// a 64-byte tile configuration, and two implementations of the same five
// operations over tiles named at compile time:
//   AmxTiles:      the instructions (ldtilecfg, tileloadd, tilezero,
//                  tilestored, tdpbsud, tilerelease), for translation units
//                  built with the AMX flags (only run where best_isa() is
//                  kAmx: the kernel granted the tile state, core/cpu_features.cc)
//   EmulatedTiles: the same operations in scalar code on tiles held in
//                  memory, per thread, following the instructions' pseudocode
//                  (Intel SDM: TDPBSUD sums 4 products of a signed byte of
//                  A's row with an unsigned byte of B's row k per int32 lane)
//                  and faulting, as the CPU would, on a shape the
//                  configuration does not allow; so the driver's tiling is
//                  tested on every CPU, and on AMX CPUs the instructions too.
// The instructions are written as inline asm, not GCC 12's <amxtileintrin.h>
// macros: those name the tile by pasting its number (no template
// arguments), tell the compiler tileloadd reads no memory (so a buffer
// written just before could be left unwritten), and _tile_loadconfig reads
// only the configuration's first 8 bytes (so stores to the rest may be
// dropped: the miscompile llama.cpp's GCC 12 builds show). Here every
// operation that touches memory says so, and the configuration is a
// constant object the asm reads whole.
// Threading: the tile state is per thread; configure() before the first
// operation on a thread, release() when done.
// Tested by tests/backend/amx_matmul_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace met::cpu {

// LDTILECFG's 64-byte operand (palette 1: 8 tiles of up to 16 rows x 64
// bytes): byte 0 the palette, 16 + 2t tile t's bytes per row, 48 + t its
// rows; every other byte zero.
struct alignas(64) TileConfig {
  uint8_t bytes[64];
};

// A palette-1 configuration from each tile's rows and bytes per row (tile
// t unused where rows[t] is 0).
constexpr TileConfig make_tile_config(const uint8_t (&rows)[8], const uint16_t (&colsb)[8]) {
  TileConfig c{};
  c.bytes[0] = 1;
  for (int t = 0; t < 8; ++t) {
    c.bytes[16 + 2 * t] = static_cast<uint8_t>(colsb[t] & 0xFF);
    c.bytes[17 + 2 * t] = static_cast<uint8_t>(colsb[t] >> 8);
    c.bytes[48 + t] = rows[t];
  }
  return c;
}

// (GCC names the AMX flags __AMX_TILE__, __AMX_INT8__; clang __AMXTILE__, __AMXINT8__.)
#if (defined(__AMX_TILE__) || defined(__AMXTILE__)) && (defined(__AMX_INT8__) || defined(__AMXINT8__))
struct AmxTiles {
  static void configure(const TileConfig& config) { asm volatile("ldtilecfg %0" : : "m"(config)); }
  static void release() { asm volatile("tilerelease" : : : "memory"); }
  template <int T>
  static void load(const void* base, size_t stride) {
    asm volatile("tileloadd (%0,%1,1), %%tmm%c2" : : "r"(base), "r"(stride), "i"(T) : "memory");
  }
  template <int T>
  static void zero() {
    asm volatile("tilezero %%tmm%c0" : : "i"(T));
  }
  template <int T>
  static void store(void* base, size_t stride) {
    asm volatile("tilestored %%tmm%c2, (%0,%1,1)" : : "r"(base), "r"(stride), "i"(T) : "memory");
  }
  // C += A (signed bytes) . B (unsigned bytes, 4 per int32 lane).
  template <int C, int A, int B>
  static void dot_signed_unsigned() {
    asm volatile("tdpbsud %%tmm%c0, %%tmm%c1, %%tmm%c2" : : "i"(B), "i"(A), "i"(C));
  }
};
#endif

struct EmulatedTiles {
  struct State {
    bool configured = false;
    uint8_t rows[8] = {};
    uint16_t colsb[8] = {};
    alignas(64) uint8_t data[8][16][64] = {};
  };
  static State& state() {
    static thread_local State s;
    return s;
  }
  // What the CPU would fault on (#UD, #GP): no configuration, a tile the
  // configuration leaves unused, shapes that do not fit.
  static void require(bool ok) {
    if (ok) return;
    std::fputs("EmulatedTiles: an AMX CPU would fault here (no tile configuration, an unconfigured tile, or "
               "shapes that do not fit)\n",
               stderr);
    std::abort();
  }
  static void configure(const TileConfig& config) {
    State& s = state();
    require(config.bytes[0] == 1);
    for (int i = 1; i < 64; ++i) {
      const bool field = (i >= 16 && i < 32) || (i >= 48 && i < 56);
      require(field || config.bytes[i] == 0);
    }
    for (int t = 0; t < 8; ++t) {
      s.colsb[t] = static_cast<uint16_t>(config.bytes[16 + 2 * t] | config.bytes[17 + 2 * t] << 8);
      s.rows[t] = config.bytes[48 + t];
      require(s.rows[t] <= 16 && s.colsb[t] <= 64 && (s.rows[t] == 0) == (s.colsb[t] == 0));
    }
    s.configured = true;
  }
  static void release() { state() = State{}; }
  static State& tile_state(int t) {
    State& s = state();
    require(s.configured && s.rows[t] != 0);
    return s;
  }
  template <int T>
  static void load(const void* base, size_t stride) {
    State& s = tile_state(T);
    std::memset(s.data[T], 0, sizeof(s.data[T]));
    for (int r = 0; r < s.rows[T]; ++r) {
      std::memcpy(s.data[T][r], static_cast<const uint8_t*>(base) + r * stride, s.colsb[T]);
    }
  }
  template <int T>
  static void zero() {
    std::memset(tile_state(T).data[T], 0, sizeof(State::data[T]));
  }
  template <int T>
  static void store(void* base, size_t stride) {
    State& s = tile_state(T);
    for (int r = 0; r < s.rows[T]; ++r) std::memcpy(static_cast<uint8_t*>(base) + r * stride, s.data[T][r], s.colsb[T]);
  }
  template <int C, int A, int B>
  static void dot_signed_unsigned() {
    State& s = tile_state(C);
    tile_state(A);
    tile_state(B);
    require(s.rows[A] == s.rows[C] && s.colsb[A] / 4 == s.rows[B] && s.colsb[B] == s.colsb[C] && s.colsb[A] % 4 == 0);
    for (int m = 0; m < s.rows[C]; ++m) {
      for (int n = 0; n < s.colsb[C] / 4; ++n) {
        int32_t acc;
        std::memcpy(&acc, &s.data[C][m][4 * n], sizeof(acc));
        for (int k = 0; k < s.colsb[A] / 4; ++k) {
          for (int i = 0; i < 4; ++i) {
            acc += static_cast<int32_t>(static_cast<int8_t>(s.data[A][m][4 * k + i])) *
                   static_cast<int32_t>(s.data[B][k][4 * n + i]);
          }
        }
        std::memcpy(&s.data[C][m][4 * n], &acc, sizeof(acc));
      }
    }
  }
};

// The tiling the AMX drivers share (matmul_x16_amx.h, matmul_kx16_amx.h):
// tmm0-3 four C tiles (16 activation rows x 16 output rows, int32), tmm4
// the B tile (a group of codes of the 16 output rows, 4 bytes of each row
// to a 64-byte row), tmm5/tmm6 the A tiles (16 activation rows' codes of
// the group, read from the prepared rows in place).
inline constexpr int kAmxTileRows = 16;    // activation rows a C tile holds
inline constexpr int kAmxPassTiles = 4;    // C tiles: tmm0 .. tmm3
inline constexpr int kAmxOutputRows = 16;  // output rows (int32 lanes) a C tile holds
inline constexpr int kAmxBTile = 4;
inline constexpr int kAmxATile = 5;  // and 6
// Groups of 32 codes: B 8 x 64 bytes, A 16 x 32; of 16 codes: B 4 x 64, A 16 x 16.
inline constexpr TileConfig kAmxConfig32 =
    make_tile_config({16, 16, 16, 16, 8, 16, 16, 0}, {64, 64, 64, 64, 64, 32, 32, 0});
inline constexpr TileConfig kAmxConfig16 =
    make_tile_config({16, 16, 16, 16, 4, 16, 16, 0}, {64, 64, 64, 64, 64, 16, 16, 0});

// C tile r (r in R...) = A tile of activation rows 16 r .. (their codes at
// a0 + 16 r stride, rows `stride` apart) . the B tile, stored to dots[r].
template <class Tiles, int... R>
inline void amx_tile_dots(const uint8_t* a0, size_t stride, int32_t (*dots)[kAmxTileRows][kAmxOutputRows],
                          std::integer_sequence<int, R...>) {
  ((Tiles::template load<kAmxATile + R % 2>(a0 + static_cast<size_t>(kAmxTileRows * R) * stride, stride),
    Tiles::template zero<R>(), Tiles::template dot_signed_unsigned<R, kAmxATile + R % 2, kAmxBTile>()),
   ...);
  (Tiles::template store<R>(dots[R], 4 * kAmxOutputRows), ...);
}

}  // namespace met::cpu
