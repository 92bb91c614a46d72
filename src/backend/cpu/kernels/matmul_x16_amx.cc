// The AMX driver (matmul_x16_amx.h) for each 16-row packed layout with
// ActQ8_0 activations and the K-quant driver (matmul_kx16_amx.h) for
// Q4_Kx16, Q5_Kx16, Q6_Kx16, Q3_Kx16, Q2_Kx16 and Iq4XsX16, on the tile instructions (AmxTiles), built with the
// AMX flags: the "amx" tier's kernels (matmul.cc), run only where
// best_isa() is kAmx.
// Threading: pure functions. Tested by tests/backend/amx_matmul_test.cc.
#include "backend/cpu/kernels/matmul_kx16_amx.h"
#include "backend/cpu/kernels/matmul_x16_amx.h"

namespace met::cpu::amx {

using amx_x16::run_groups;

void matmul_q8_0x16(const MatmulTask& t) { run_groups<AmxTiles, avx512::Q8_0x16Decoder>(t, avx512::matmul_q8_0x16); }

void matmul_mxfp4x16(const MatmulTask& t) { run_groups<AmxTiles, avx512::Mxfp4x16Decoder>(t, avx512::matmul_mxfp4x16); }

void matmul_iq4_nlx16(const MatmulTask& t) {
  run_groups<AmxTiles, avx512::Iq4NlX16Decoder>(t, avx512::matmul_iq4_nlx16);
}

void matmul_q4_0x16(const MatmulTask& t) { run_groups<AmxTiles, avx512::Q4_0x16Decoder>(t, avx512::matmul_q4_0x16); }

void matmul_q5_0x16(const MatmulTask& t) { run_groups<AmxTiles, avx512::Q5_0x16Decoder>(t, avx512::matmul_q5_0x16); }

void matmul_q4_1x16(const MatmulTask& t) { run_groups<AmxTiles, avx512::Q4_1x16Decoder>(t, avx512::matmul_q4_1x16); }

void matmul_q5_1x16(const MatmulTask& t) { run_groups<AmxTiles, avx512::Q5_1x16Decoder>(t, avx512::matmul_q5_1x16); }

void matmul_q4_kx16(const MatmulTask& t) {
  amx_kx16::run_groups<AmxTiles, amx_kx16::ScaleMin<kx16::Q4_KFields>>(t, avx512::matmul_q4_kx16);
}

void matmul_q5_kx16(const MatmulTask& t) {
  amx_kx16::run_groups<AmxTiles, amx_kx16::ScaleMin<kx16::Q5_KFields>>(t, avx512::matmul_q5_kx16);
}

void matmul_q6_kx16(const MatmulTask& t) { amx_kx16::run_groups<AmxTiles, amx_kx16::Q6_K>(t, avx512::matmul_q6_kx16); }

void matmul_q3_kx16(const MatmulTask& t) {
  amx_kx16::run_groups<AmxTiles, amx_kx16::Q3_K>(t, avx512::matmul_q3_kx16);
}

void matmul_iq4_xsx16(const MatmulTask& t) {
  amx_kx16::run_groups<AmxTiles, amx_kx16::Iq4Xs>(t, avx512::matmul_iq4_xsx16);
}

void matmul_q2_kx16(const MatmulTask& t) {
  amx_kx16::run_groups<AmxTiles, amx_kx16::Q2_K>(t, avx512::matmul_q2_kx16);
}

}  // namespace met::cpu::amx
