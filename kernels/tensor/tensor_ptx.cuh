// PTX wrappers shared by the tensor-core families: ldmatrix, mma.sync for TF32 and FP64, and
// the TF32 rounding. The sm_90a-only wrappers (wgmma, setmaxnreg) live in sm90a_ptx.cuh so that
// this header stays valid for any architecture >= sm_80; the one sm_90 wrapper here (FP64
// m16n8k16) is defined in sm_90+ passes only. Copies and barriers: common/async_copy.cuh.
//
// Every wrapper is one instruction; the comments say what the operands mean, because the
// fragment layouts they imply are what the kernels are built around.
#pragma once

#include <cstdint>

#include "common/async_copy.cuh"

namespace gemm::tensor {

// --- TF32 ------------------------------------------------------------------------------------
// Round an FP32 value to the nearest TF32 (10 explicit mantissa bits, ties away from zero),
// kept in a 32-bit register. Without it the tensor core simply ignores the low 13 bits
// (truncation): twice the error, and a bias towards zero.
// On sm_90 three instructions: a test for a finite value, the addition of half a TF32 ulp to the
// bits of a finite one, the clearing of the low 13 bits (where the result only feeds mma.sync,
// which ignores those bits, ptxas leaves the last one out; before wgmma it keeps it).
__device__ __forceinline__ std::uint32_t to_tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// How a kernel hands FP32 words that go through its registers to the tensor core: rounded to the
// nearest TF32 (cvt.rna, as cuBLAS's TF32 path does), or as they are, truncated by the tensor
// core.
enum class Tf32Rounding { nearest, truncate };

// The unit roundoff a TF32 variant states (Variant::unit_roundoff; the verification tolerance
// follows it): 2^-11 for an operand rounded to the nearest TF32, 2^-10 for a truncated one (its
// error is below one TF32 ulp); where A and B are treated differently, the mean of the two, so
// that the tolerance's two operand errors add up to the actual ones.
constexpr double tf32_unit_roundoff(Tf32Rounding a, Tf32Rounding b) {
  auto u = [](Tf32Rounding r) { return r == Tf32Rounding::nearest ? 0x1p-11 : 0x1p-10; };
  return (u(a) + u(b)) / 2;
}

template <Tf32Rounding R>
__device__ __forceinline__ std::uint32_t tf32_operand(std::uint32_t fp32_bits) {
  if constexpr (R == Tf32Rounding::nearest) return to_tf32(__uint_as_float(fp32_bits));
  return fp32_bits;
}
template <Tf32Rounding R, int N>
__device__ __forceinline__ void tf32_operands(std::uint32_t (&words)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) words[i] = tf32_operand<R>(words[i]);
}
template <Tf32Rounding R>
__device__ __forceinline__ uint4 tf32_operands(uint4 w) {
  return make_uint4(tf32_operand<R>(w.x), tf32_operand<R>(w.y), tf32_operand<R>(w.z),
                    tf32_operand<R>(w.w));
}

// ldmatrix.x4: four 8x8 matrices of 16-bit elements, i.e. four 8-row x 16-byte blocks. Lanes
// 8j..8j+7 give the row addresses of block j; every lane receives, of each block j, the 32-bit
// word (lane % 4) of row (lane / 4). For 32-bit TF32 data a 16-byte row is 4 elements, so a
// block is an 8 x 4 TF32 tile and lane (g = lane/4, t = lane%4) receives element (g, t) of it:
// exactly the mma.m16n8k8 A-fragment layout. (The .trans form would transpose 16-bit halves
// and scramble 32-bit elements, so it is of no use for TF32: B is read with plain loads.)
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t smem_row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_row_addr));
}

// mma.sync m16n8k8 TF32 x TF32 -> FP32, one warp. With g = lane/4, t = lane%4:
//   a[0] = A[g][t], a[1] = A[g+8][t], a[2] = A[g][t+4], a[3] = A[g+8][t+4]   (A: 16 x 8)
//   b[0] = B[t][g], b[1] = B[t+4][g]                                          (B: 8 x 8)
//   c[0] = C[g][2t], c[1] = C[g][2t+1], c[2] = C[g+8][2t], c[3] = C[g+8][2t+1]
// 16*8*8 = 1024 multiply-adds per warp instruction (one HMMA.1688.F32.TF32 in SASS).
__device__ __forceinline__ void mma_tf32_16x8x8(float (&c)[4], const std::uint32_t (&a)[4],
                                                const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// mma.sync m8n8k4 FP64 (DMMA), one warp. With g = lane/4, t = lane%4:
//   a = A[g][t] (A: 8 x 4), b = B[t][g] (B: 4 x 8), c[0] = C[g][2t], c[1] = C[g][2t+1].
// 8*8*4 = 256 multiply-adds per warp instruction (one DMMA.884 in SASS).
__device__ __forceinline__ void mma_f64_8x8x4(double (&c)[2], double a, double b) {
  asm volatile(
      "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
      : "+d"(c[0]), "+d"(c[1])
      : "d"(a), "d"(b));
}

// mma.sync m16n8k16 FP64 (DMMA), one warp; sm_90 and later only, so it exists only in those
// compilation passes (a call from older code fails to compile instead of failing at run time).
// With g = lane/4, t = lane%4:
//   a[i] = A[g + 8 (i % 2)][t + 4 (i / 2)]   (A: 16 x 16, i = 0..7)
//   b[j] = B[t + 4 j][g]                     (B: 16 x 8, j = 0..3)
//   c[r] = C[g + 8 (r / 2)][2t + (r % 2)]    (C: 16 x 8, r = 0..3)
// 16*8*16 = 2048 multiply-adds per warp instruction, 8x an m8n8k4.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ void mma_f64_16x8x16(double (&c)[4], const double (&a)[8],
                                                const double (&b)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}
#endif

}  // namespace gemm::tensor
