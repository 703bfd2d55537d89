// Device helpers shared by the CUDA-core ladder (kernels/ladder/*.cu): 16-byte vector types,
// the block-order swizzle and the device check every cp.async rung makes. (Copies and barriers:
// common/async_copy.cuh.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/async_copy.cuh"
#include "common/tile_order.cuh"
#include "launch.cuh"

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

// --- block order ------------------------------------------------------------------------------
// The tile of C this block computes. GROUP == 0: row-major block order (blockIdx.x walks the
// columns of C). GROUP > 0: the grouped order of common/tile_order.cuh.
// REREAD: read the block index again (asm volatile) instead of reusing values read earlier, so
// a kernel's epilogue keeps no coordinates in registers across its main loop.
template <int GROUP, bool REREAD = false>
__device__ __forceinline__ void block_tile_coords(int& tile_m, int& tile_n) {
  int bx, by, gx, gy;
  if constexpr (REREAD) {
    const int2 b = reread_block_index();
    bx = b.x, by = b.y;
    asm volatile("mov.u32 %0, %%nctaid.x;" : "=r"(gx));
    asm volatile("mov.u32 %0, %%nctaid.y;" : "=r"(gy));
  } else {
    bx = blockIdx.x, by = blockIdx.y, gx = gridDim.x, gy = gridDim.y;
  }
  if constexpr (GROUP <= 0) {
    tile_m = by;
    tile_n = bx;
  } else {
    grouped_tile<GROUP>(by * gx + bx, gy, gx, tile_m, tile_n);
  }
}


}  // namespace gemm::ladder

namespace gemm {

// The tiles of a rung below the pipelined ones: the block's tile of C (bm x bn) and k-tile (bk),
// each warp's tile (wm x wn; 0: the rung has no warp tiles) and each thread's (tm x tn; tn 0: a
// column of tm outputs).
struct LadderTile {
  int bm;
  int bn;
  int bk;
  int wm = 0;
  int wn = 0;
  int tm;
  int tn = 0;

  constexpr int outputs_per_thread() const { return tm * (tn > 0 ? tn : 1); }
  // The fields that are set, as the variant's name and fields give them.
  std::vector<Param> params() const {
    std::vector<Param> p = {{"bm", bm}, {"bn", bn}, {"bk", bk}};
    if (wm > 0) p.insert(p.end(), {{"wm", wm}, {"wn", wn}});
    p.push_back({"tm", tm});
    if (tn > 0) p.push_back({"tn", tn});
    return p;
  }
};

// cp.async needs compute capability 8.0 (an unknown device, 0.0, is not refused).
inline std::optional<std::string> needs_sm80(const DeviceLimits& d) {
  if (d.cc_major != 0 && d.cc_major < 8)
    return "cp.async needs compute capability >= 8.0 (device is " + std::to_string(d.cc_major) +
           "." + std::to_string(d.cc_minor) + ")";
  return std::nullopt;
}

}  // namespace gemm
