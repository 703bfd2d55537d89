// Operands for TMA at any K and N. A tensor map's row stride must be a multiple of 16 bytes, so
// FP32 matrices with K (A's rows) or N (B's rows) not a multiple of 4 cannot be tensor maps as
// they lie. They are copied into the workspace with rows padded to a multiple of 4
// (A: M x K, B: K x N), the GEMM runs on the copies (the maps keep the true K and N, so TMA
// reads the padding as zeros, as it does any box past the matrix). C is not read through a
// map: the kernels store it in place at any N (wgmma_tile.cuh), so it needs no copy. The
// copies are part of the variant's run, so their time is in every timing of it: at
// 4096 x 4096 x 4093, A's copy moves 128 MB, about 5% of the GEMM; at 2049 x 2047 x 33, the
// copies of A and B read and write about 1.1 MB where a padded C and its copy back moved 50 MB.
#pragma once

#include <cstddef>
#include <cstdint>

#include "launch.cuh"

namespace gemm::tensor {

// rows x cols of src (rows lds apart) into dst (rows ldd apart, ldd >= cols), zeros in columns
// cols .. ldd - 1. Consecutive threads take consecutive columns: coalesced on both sides. (A
// template: the header is in several files' device code.)
template <typename T>
__global__ void __launch_bounds__(256) copy_rows_kernel(const T* src, int rows, int cols, int lds,
                                                        T* dst, int ldd) {
  for (int r = blockIdx.y; r < rows; r += gridDim.y)
    for (int c = blockIdx.x * 256 + threadIdx.x; c < ldd; c += gridDim.x * 256)
      dst[std::int64_t(r) * ldd + c] = c < cols ? src[std::int64_t(r) * lds + c] : T(0);
}

inline void copy_rows(const float* src, int rows, int cols, int lds, float* dst, int ldd,
                      cudaStream_t stream) {
  LaunchPlan p;
  p.block = {256, 1, 1};
  p.grid = {std::min<std::int64_t>(ceil_div(ldd, 256), 64), std::min<std::int64_t>(rows, 65535), 1};
  launch(p, stream, copy_rows_kernel<float>, src, rows, cols, lds, dst, ldd);
}

// Where the padded copies lie in the workspace: A (M x Kp) where K % 4 != 0, B (K x Np) where
// N % 4 != 0, each 256-byte aligned.
struct TmaPadding {
  std::int64_t m, n, k, kp, np;
  bool pad_a() const { return kp != k; }
  bool pad_n() const { return np != n; }

  explicit TmaPadding(const GemmShape& s)
      : m(s.m), n(s.n), k(s.k), kp((s.k + 3) / 4 * 4), np((s.n + 3) / 4 * 4) {}
  static std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  std::size_t a_bytes() const { return pad_a() ? aligned(std::size_t(m * kp) * sizeof(float)) : 0; }
  std::size_t b_bytes() const { return pad_n() ? aligned(std::size_t(k * np) * sizeof(float)) : 0; }
  std::size_t bytes() const { return a_bytes() + b_bytes(); }
};

// The operands the maps see: the originals, or their padded copies.
struct TmaOperands {
  const float* a;
  int lda;
  const float* b;
  int ldb;
};

// Copies A and B into the workspace where their strides need it (on `stream`, before the GEMM).
inline TmaOperands tma_operands(const Operands& ops, cudaStream_t stream) {
  const TmaPadding pad(ops.shape);
  const int m = int(pad.m), n = int(pad.n), k = int(pad.k);
  TmaOperands t{static_cast<const float*>(ops.a), k, static_cast<const float*>(ops.b), n};
  if (pad.bytes() == 0) return t;
  if (ops.workspace == nullptr || ops.workspace_bytes < pad.bytes())
    throw std::invalid_argument("wgmma: needs a workspace of " + std::to_string(pad.bytes()) +
                                " bytes for " + ops.shape.to_string() +
                                " (rows padded to 16 bytes for TMA)");
  auto* base = static_cast<unsigned char*>(ops.workspace);
  if (pad.pad_a()) {
    auto* a = reinterpret_cast<float*>(base);
    copy_rows(t.a, m, k, k, a, int(pad.kp), stream);
    t = {a, int(pad.kp), t.b, t.ldb};
  }
  if (pad.pad_n()) {
    auto* b = reinterpret_cast<float*>(base + pad.a_bytes());
    copy_rows(t.b, k, n, n, b, int(pad.np), stream);
    t = {t.a, t.lda, b, int(pad.np)};
  }
  return t;
}

}  // namespace gemm::tensor
