// Device helpers shared by the CUDA-core ladder (kernels/ladder/*.cu): 16-byte vector types,
// cp.async wrappers, the block-order swizzle and the device check every cp.async rung makes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "launch.cuh"
#include "mbarrier.cuh"

namespace gemm::ladder {

// 16 bytes of T: the widest load a thread can issue (LDG.128 / LDS.128 / STS.128).
template <typename T>
struct Vec16;
template <>
struct Vec16<float> {
  using type = float4;
};
template <>
struct Vec16<double> {
  using type = double2;
};
template <typename T>
using vec16_t = typename Vec16<T>::type;

// Elements of T in 16 bytes: 4 floats, 2 doubles.
template <typename T>
constexpr int kVec = 16 / int(sizeof(T));

// Lanes that one shared-memory phase serves for element-wide accesses: 32-bit accesses are
// served for the whole warp, 64-bit ones per half-warp, so one phase covers 128 bytes either way.
template <typename T>
constexpr int kPhaseElems = 128 / int(sizeof(T));

template <typename T>
__device__ __forceinline__ vec16_t<T> load_vec(const T* p) {
  return *reinterpret_cast<const vec16_t<T>*>(p);
}
template <typename T>
__device__ __forceinline__ void store_vec(T* p, const vec16_t<T>& v) {
  *reinterpret_cast<vec16_t<T>*>(p) = v;
}
// The i-th element of a 16-byte vector (i a compile-time constant after unrolling).
__device__ __forceinline__ float vec_at(const float4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
__device__ __forceinline__ double vec_at(const double2& v, int i) { return i == 0 ? v.x : v.y; }
__device__ __forceinline__ float4 zero_vec(float) { return make_float4(0.f, 0.f, 0.f, 0.f); }
__device__ __forceinline__ double2 zero_vec(double) { return make_double2(0.0, 0.0); }

// --- cp.async (sm_80+): global -> shared without a register round trip ------------------------
// `valid == false` copies nothing and zero-fills the destination (src-size 0), so a tile's
// out-of-range elements read as zero without a branch around the copy. With src-size 0 no byte
// of the source is read, so its address may lie outside the matrix (compute-sanitizer memcheck
// over the tail shapes agrees): no select of a safe address per copy.
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
template <int BYTES>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem, bool valid) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  const int src_bytes = valid ? BYTES : 0;
  if constexpr (BYTES == 16) {
    // .cg: 16-byte copies may bypass L1; each element is used by one block only.
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "r"(src_bytes));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem_addr(smem)),
                 "l"(gmem), "n"(BYTES), "r"(src_bytes));
  }
}
// Same, without the zero-fill operand: the aligned fast path never needs it.
template <int BYTES>
__device__ __forceinline__ void cp_async(void* smem, const void* gmem) {
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(smem)), "l"(gmem));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
                 "n"(BYTES));
  }
}
// Same, to a shared-memory address (smem_addr) and only where `pred` holds: a predicated
// instruction, not a branch, so the copies of a k-tile stay in the basic block of the FMAs that
// hide them. The source is not read where `pred` is false.
template <int BYTES>
__device__ __forceinline__ void cp_async_if(std::uint32_t smem, const void* gmem, bool pred) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (BYTES == 16) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
        " @p cp.async.cg.shared.global [%0], [%1], 16;\n}\n" ::"r"(smem),
        "l"(gmem), "r"(int(pred)));
  } else {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
        " @p cp.async.ca.shared.global [%0], [%1], %3;\n}\n" ::"r"(smem),
        "l"(gmem), "r"(int(pred)), "n"(BYTES));
  }
}
// Zero-filling copy to a shared-memory address (see cp_async(smem, gmem, valid)).
template <int BYTES>
__device__ __forceinline__ void cp_async_zfill(std::uint32_t smem, const void* gmem, bool valid) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  const int src_bytes = valid ? BYTES : 0;
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem),
                 "r"(src_bytes));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(gmem),
                 "n"(BYTES), "r"(src_bytes));
  }
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
// Waits for every cp.async this thread has issued, in a group or not.
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// --- block order ------------------------------------------------------------------------------
// The tile of C this block computes. GROUP == 0: row-major block order (blockIdx.x walks the
// columns of C). GROUP > 0: blocks launched together walk GROUP rows of tiles column by column,
// so they share GROUP row panels of A and a few column panels of B in L2 instead of sweeping
// all of B (the grouped ordering of Triton's matmul tutorial).
// REREAD: read the block index again (asm volatile) instead of reusing values read earlier, so
// a kernel's epilogue keeps no coordinates in registers across its main loop.
template <int GROUP, bool REREAD = false>
__device__ __forceinline__ void block_tile_coords(int& tile_m, int& tile_n) {
  int bx, by, gx, gy;
  if constexpr (REREAD) {
    asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(bx));
    asm volatile("mov.u32 %0, %%ctaid.y;" : "=r"(by));
    asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(gx));
    asm volatile("mov.u32 %0, %%nctaid.y;" : "=r"(gy));
  } else {
    bx = blockIdx.x, by = blockIdx.y, gx = gridDim.x, gy = gridDim.y;
  }
  if constexpr (GROUP <= 0) {
    tile_m = by;
    tile_n = bx;
  } else {
    const int tiles_n = gx, tiles_m = gy;
    const int pid = by * tiles_n + bx;
    const int per_group = GROUP * tiles_n;
    const int group = pid / per_group;
    const int first_m = group * GROUP;
    const int rows = min(tiles_m - first_m, GROUP);
    const int in_group = pid - group * per_group;
    tile_m = first_m + in_group % rows;
    tile_n = in_group / rows;
  }
}

// threadIdx.x read again (see block_tile_coords<GROUP, true>).
__device__ __forceinline__ int reread_thread_index() {
  int tid;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
  return tid;
}

}  // namespace gemm::ladder

namespace gemm {

// cp.async needs compute capability 8.0 (an unknown device, 0.0, is not refused).
inline std::optional<std::string> needs_sm80(const DeviceLimits& d) {
  if (d.cc_major != 0 && d.cc_major < 8)
    return "cp.async needs compute capability >= 8.0 (device is " + std::to_string(d.cc_major) +
           "." + std::to_string(d.cc_minor) + ")";
  return std::nullopt;
}

}  // namespace gemm
