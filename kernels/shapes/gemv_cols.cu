// gemv_cols: C = A B for N <= 16 columns of B on the CUDA cores, bound by reading A once: the
// mirror of gemv (a few rows of A). 4097 x 1 x 4096 in FP32 reads 64 MB of A for 34 MFLOP, so
// the rate to reach is the memory's; a 128 x 128 tile kernel spends 127 of every 128 columns of
// its tile on nothing there.
//
// One warp per row of A (a grid-stride loop over the rows): lane l reads the 16-byte vectors
// l, l + 32, ... of the row (one load instruction of a warp reads 512 contiguous bytes), and for
// each element k of a vector the NT values B[k][0 .. N) (B is K x N with N <= 16: a row of B is
// at most 64 bytes, read through L1, where the other warps of the SM find it), keeping NT sums.
// The warp adds its lanes' sums with shuffles, in the same order every run, and lane n writes
// C[m][n]. NT is the smallest of 1, 2, 4, 8, 16 that holds N (the instance the shape runs).
// ALIGNED (K a multiple of the vector): 16-byte loads of A; otherwise element loads.
#include <algorithm>
#include <string>
#include <type_traits>

#include "launch.cuh"

namespace gemm {
namespace {

constexpr int kMaxCols = 16;
constexpr int kWarps = 8;  // warps per block, each its own rows

template <typename T, int NT, bool ALIGNED>
__global__ void __launch_bounds__(32 * kWarps) gemv_cols_kernel(const T* A, const T* B, T* C, int M,
                                                                 int N, int K) {
  constexpr int V = 16 / int(sizeof(T));  // elements per 16-byte vector
  using Vec = std::conditional_t<sizeof(T) == 4, float4, double2>;
  const int lane = threadIdx.x % 32;
  const int warps = gridDim.x * kWarps;
  for (int m = blockIdx.x * kWarps + threadIdx.x / 32; m < M; m += warps) {
    const T* a_row = A + std::size_t(m) * K;
    T sum[NT];
#pragma unroll
    for (int n = 0; n < NT; ++n) sum[n] = T(0);
    const auto add = [&](int k, T a) {
#pragma unroll
      for (int n = 0; n < NT; ++n)
        if (n < N) sum[n] += a * __ldg(B + std::size_t(k) * N + n);
    };
    if constexpr (ALIGNED) {
      for (int k = lane * V; k < K; k += 32 * V) {
        const Vec v = __ldg(reinterpret_cast<const Vec*>(a_row + k));
        if constexpr (V == 4) {
          add(k, v.x), add(k + 1, v.y), add(k + 2, v.z), add(k + 3, v.w);
        } else {
          add(k, v.x), add(k + 1, v.y);
        }
      }
    } else {
      for (int k = lane; k < K; k += 32) add(k, __ldg(a_row + k));
    }
#pragma unroll
    for (int n = 0; n < NT; ++n)
      for (int offset = 16; offset > 0; offset /= 2) sum[n] += __shfl_down_sync(0xffffffffu, sum[n], offset);
    // Lane 0 holds the sums; it hands column n to lane n for the store.
#pragma unroll
    for (int n = 0; n < NT; ++n) {
      const T total = __shfl_sync(0xffffffffu, sum[n], 0);
      if (lane == n && n < N) C[std::size_t(m) * N + n] = total;
    }
  }
}

template <typename T, bool ALIGNED>
const void* instance(int n) {
  if (n <= 1) return reinterpret_cast<const void*>(gemv_cols_kernel<T, 1, ALIGNED>);
  if (n <= 2) return reinterpret_cast<const void*>(gemv_cols_kernel<T, 2, ALIGNED>);
  if (n <= 4) return reinterpret_cast<const void*>(gemv_cols_kernel<T, 4, ALIGNED>);
  if (n <= 8) return reinterpret_cast<const void*>(gemv_cols_kernel<T, 8, ALIGNED>);
  return reinterpret_cast<const void*>(gemv_cols_kernel<T, 16, ALIGNED>);
}

template <typename T>
bool aligned(const GemmShape& s) {
  return s.k % (16 / std::int64_t(sizeof(T))) == 0;
}

template <typename T>
LaunchPlan plan(const GemmShape& s) {
  LaunchPlan p;
  // Up to eight resident blocks of eight warps per SM on any GPU this runs on are 64 warps per
  // SM; the grid-stride loop takes the rows past them. 2048 blocks cover an H100 several times.
  p.grid = {std::min<std::int64_t>(ceil_div(s.m, kWarps), 2048), 1, 1};
  p.block = {32 * kWarps, 1, 1};
  p.kernel = aligned<T>(s) ? instance<T, true>(int(s.n)) : instance<T, false>(int(s.n));
  return p;
}

template <typename T, int NT, bool ALIGNED>
void run_instance(const Operands& ops, cudaStream_t stream) {
  const GemmShape& s = ops.shape;
  launch(plan<T>(s), stream, gemv_cols_kernel<T, NT, ALIGNED>, static_cast<const T*>(ops.a),
         static_cast<const T*>(ops.b), static_cast<T*>(ops.c), int(s.m), int(s.n), int(s.k));
}

template <typename T, bool ALIGNED>
void run_aligned(const Operands& ops, cudaStream_t stream) {
  const std::int64_t n = ops.shape.n;
  if (n <= 1) return run_instance<T, 1, ALIGNED>(ops, stream);
  if (n <= 2) return run_instance<T, 2, ALIGNED>(ops, stream);
  if (n <= 4) return run_instance<T, 4, ALIGNED>(ops, stream);
  if (n <= 8) return run_instance<T, 8, ALIGNED>(ops, stream);
  return run_instance<T, 16, ALIGNED>(ops, stream);
}

std::optional<std::string> reason(const GemmShape& s, const DeviceLimits&) {
  if (s.n > kMaxCols)
    return "N > " + std::to_string(kMaxCols) +
           ": the kernel keeps a thread's sums for at most 16 columns of B in registers (a tile "
           "kernel takes more columns)";
  return std::nullopt;
}

}  // namespace

void add_gemv_cols_variants(std::vector<Variant>& out) {
  for_each_precision([&]<typename Tag>(Tag) {
    using T = typename Tag::type;
    KernelLaunch l;
    l.plan = plan<T>;
    l.run = [](const Operands& ops, cudaStream_t stream) {
      if (aligned<T>(ops.shape))
        run_aligned<T, true>(ops, stream);
      else
        run_aligned<T, false>(ops, stream);
    };
    out.push_back(VariantBuilder::of<T>("gemv_cols")
                      .launch(l)
                      .outputs_per_thread(0)
                      .precondition(reason)
                      .note("N <= 16; one warp per row of A, 16-byte loads of A where K allows, "
                            "the lanes' sums added with shuffles (deterministic)")
                      .build());
  });
}

}  // namespace gemm
