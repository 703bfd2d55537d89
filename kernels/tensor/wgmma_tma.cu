// TF32 wgmma fed by TMA (sm_90a): tiles come into shared memory by cp.async.bulk.tensor,
// completing on mbarriers, STAGES k-tiles deep; warpgroups multiply them with wgmma.mma_async.
//
// The operand problem. wgmma takes TF32 operands from shared memory only K-major ("tf32 requires
// K-major for both A and B": the transpose immediates exist for 16-bit types alone). A (M x K,
// row-major) is K-major; B (K x N, row-major) is N-major, and no tensor-map trick makes TMA
// transpose 4-byte elements (the box's inner dimension is always the contiguous one). Kernels may
// not allocate a transposed copy. What the ISA does allow is an A operand in *registers*, where
// the layout in memory no longer matters. So each block computes the transposed tile
//     C^T (N x M) = B^T (N x K) * A^T (K x M):
//   - wgmma's A operand is B^T, 64 rows (= columns n of C) per consumer warpgroup, loaded by the
//     threads from the TMA tile of B (n contiguous) into the m16n8k8-style fragment;
//   - wgmma's B operand is A^T, i.e. the TMA tile of A exactly as it lands (K-major, 128-byte
//     swizzle), described to wgmma by a matrix descriptor; its "N" is BM (128 or 256);
//   - the accumulators hold C^T; each thread writes its elements of C directly.
// Shared-memory traffic is what an all-shared-memory wgmma would cost: the fragment loads replace
// the tensor core's own reads of the A operand.
//
// Fragment loads of B^T. Lane (g, t) of warp w needs, per k8 step, the elements (row g, k t) and
// (g + 8, t), (g, t + 4), (g + 8, t + 4). Rows of the fragment are free to map to any columns n
// of B (the accumulator rows follow the same map), so rows g and g + 8 are given two adjacent
// columns: one 8-byte load per k. The B tile arrives as 32 x 32 boxes, 128-byte swizzled (chunk
// c of row k stored at chunk c ^ (k % 8)); the pairs of a warp are spread as
//     n = 8 (w % 2) + 2 (g % 2) + 16 ((g / 2) % 2) + 4 (g / 4)   inside box 2 * warpgroup + w / 2
// so that a half-warp's 4 rows k = t x 4 pairs fall on 16 distinct (chunk, half) slots after the
// swizzle: conflict-free 8-byte loads.
//
// Block: BN / 64 consumer warpgroups (warps 0 .. 4c-1, so each starts at a warp index divisible
// by 4) and one producer warpgroup, one thread of which issues the copies (a whole warpgroup, not
// a warp, because registers are handed out per warpgroup: setmaxnreg gives the producer 40 (24)
// registers and the consumers the rest, 232 (120) each, where the 256 x 128 tile's 128
// accumulators need them; without it ptxas caps every thread at 168 and serializes the wgmmas).
// The producer thread waits for a stage's "empty"
// barrier (one arrival per consumer warp), announces the stage's bytes on its "full" barrier and
// issues one TMA for A (BM x 32) and BN / 32 for B (32 x 32 boxes). Consumers wait on "full",
// load their fragments, issue the 4 wgmmas of the k-tile, wait for them, and release the stage.
// The two or more consumer warpgroups interleave on the tensor pipe: while one loads fragments,
// the other's wgmmas run.
//
// Tails: TMA zero-fills outside the tensor (M, N, K tails), stores are bounds-checked. TMA needs
// 16-byte row strides, hence K % 4 == 0 and N % 4 == 0 (refused otherwise, by the variant).
#ifndef GEMM_HAVE_SM90A
#define GEMM_HAVE_SM90A 1  // this file is the sm_90a build: see the declarations in wgmma_tma.h
#endif

#include <cuda.h>

#include <array>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "cuda_check.h"
#include "launch.cuh"
#include "sm90a_ptx.cuh"
#include "wgmma_tma.h"

namespace gemm::tensor {
namespace {

template <int BM, int BN, int STAGES>
struct WgTile {
  static constexpr int BK = WgmmaTmaConfig::bk;
  static constexpr int CONSUMERS = BN / 64;
  static constexpr int THREADS = CONSUMERS * 128 + 128;
  static constexpr int A_BYTES = BM * BK * 4;
  static constexpr int B_BOX_BYTES = 32 * BK * 4;  // 32 columns x BK rows
  static constexpr int B_BYTES = BN * BK * 4;
  static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
  static constexpr int ACC = BM / 2;  // FP32 accumulators per thread: 64 x BM / 128 threads
  static_assert(BM == 128 || BM == 256, "wgmma N (= BM here) of 128 or 256");
  static_assert(BN % 64 == 0 && BN >= 64 && BN <= 256, "64 columns per consumer warpgroup");
  static_assert(A_BYTES % 1024 == 0 && STAGE_BYTES % 1024 == 0, "1024-byte aligned tiles");
};

template <int BM>
__device__ __forceinline__ void wgmma_tile(float (&d)[BM / 2], const std::uint32_t (&a)[4],
                                           std::uint64_t desc) {
  if constexpr (BM == 256)
    wgmma_m64n256k8_tf32_rs(d, a, desc);
  else
    wgmma_m64n128k8_tf32_rs(d, a, desc);
}

template <int BM, int BN, int STAGES, int PRODUCER_REGS, int CONSUMER_REGS>
__global__ void __launch_bounds__(WgTile<BM, BN, STAGES>::THREADS, 1)
    wgmma_tma_kernel(const float* A, const float* B, float* C, int M, int N, int K,
                     const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b) {
  using P = WgTile<BM, BN, STAGES>;
  (void)A;
  (void)B;  // read through the tensor maps
  extern __shared__ unsigned char smem_raw[];
  // Align the tiles to 1024 bytes (the smem_bytes() slack pays for it).
  const std::uint32_t raw_addr = smem_addr(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + STAGES * P::STAGE_BYTES);
  std::uint64_t* empty = full + STAGES;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_tiles = (K + P::BK - 1) / P::BK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);                   // the producer's arrive.expect_tx
      mbar_init(&empty[s], P::CONSUMERS * 4);   // one arrival per consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warp >= P::CONSUMERS * 4) {  // the producer warpgroup
    setmaxnreg_dec<PRODUCER_REGS>();
    if (warp == P::CONSUMERS * 4 && lane == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(&empty[s], ((kt / STAGES) - 1) & 1);
        unsigned char* stage = smem + s * P::STAGE_BYTES;
        mbar_arrive_expect_tx(&full[s], P::STAGE_BYTES);
        tma_load_2d(stage, &map_a, kt * P::BK, m0, &full[s]);
#pragma unroll
        for (int j = 0; j < BN / 32; ++j)
          tma_load_2d(stage + P::A_BYTES + j * P::B_BOX_BYTES, &map_b, n0 + 32 * j, kt * P::BK,
                      &full[s]);
      }
    }
    return;
  }

  // Consumers.
  setmaxnreg_inc<CONSUMER_REGS>();
  const int wg = warp / 4, w = warp % 4;
  const int g = lane / 4, t = lane % 4;
  const int box = 2 * wg + w / 2;
  const int n_in_box = 8 * (w % 2) + 2 * (g % 2) + 16 * ((g / 2) % 2) + 4 * (g / 4);
  const int chunk = n_in_box / 4, word = n_in_box % 4;

  float d[P::ACC];
#pragma unroll
  for (int i = 0; i < P::ACC; ++i) d[i] = 0.0f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % STAGES;
    mbar_wait(&full[s], (kt / STAGES) & 1);
    const unsigned char* stage = smem + s * P::STAGE_BYTES;
    const unsigned char* bbox = stage + P::A_BYTES + box * P::B_BOX_BYTES;

    std::uint32_t a[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int k = 8 * kk + t + 4 * h;  // k % 8 == t + 4h: the swizzle key of row k
        const uint2 v = *reinterpret_cast<const uint2*>(bbox + k * 128 +
                                                        ((chunk ^ (k & 7)) << 4) + word * 4);
        a[kk][2 * h] = v.x;      // row g     (column n_in_box)
        a[kk][2 * h + 1] = v.y;  // row g + 8 (column n_in_box + 1)
      }

    wgmma_fence();
    const std::uint32_t a_tile = smem_addr(stage);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) wgmma_tile<BM>(d, a[kk], desc_k_major_sw128(a_tile + 32 * kk));
    wgmma_commit();
    wgmma_wait<0>();  // the stage (and the fragment registers) are free again
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
  }

  // d holds C^T: fragment row g <-> column n, row g + 8 <-> column n + 1; fragment column
  // 8i + 2t (+1) <-> row m (+1) of C.
  const int n = n0 + box * 32 + n_in_box;
  if (n >= N) return;  // N % 4 == 0 and n even: n < N implies n + 1 < N
#pragma unroll
  for (int i = 0; i < BM / 8; ++i) {
    const int m = m0 + 8 * i + 2 * t;
    if (m < M)
      *reinterpret_cast<float2*>(C + std::size_t(m) * N + n) = make_float2(d[4 * i], d[4 * i + 2]);
    if (m + 1 < M)
      *reinterpret_cast<float2*>(C + std::size_t(m + 1) * N + n) =
          make_float2(d[4 * i + 1], d[4 * i + 3]);
  }
}

// --- host: tensor maps -------------------------------------------------------------------------

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// cuTensorMapEncodeTiled through the runtime's driver entry point, so that nothing links libcuda
// (binaries must start, and say "no GPU", on machines without a driver).
EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void* symbol = nullptr;
    cudaDriverEntryPointQueryResult found{};
    GEMM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &symbol, 12000,
                                                     cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || symbol == nullptr)
      throw std::runtime_error("cuTensorMapEncodeTiled not found in the CUDA driver");
    return reinterpret_cast<EncodeTiled>(symbol);
  }();
  return fn;
}

// A row-major rows x cols FP32 matrix, boxes of box_rows x box_cols, 128-byte swizzle (box_cols
// * 4 must be <= 128), zeros outside the matrix.
CUtensorMap encode_2d(const float* base, int rows, int cols, int box_rows, int box_cols) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(cols) * sizeof(float)};
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides, box,
      elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) +
                             ") for a " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " matrix");
  return map;
}

// Encoding is host-only and cheap (no driver round trip, a few hundred nanoseconds), but it is
// per launch; the maps are cached per (config, pointers, shape) so a timed loop launches only.
struct MapPair {
  CUtensorMap a, b;
};
const MapPair& maps_for(int config, int bm, const float* A, const float* B, int M, int N, int K) {
  using Key = std::tuple<int, const float*, const float*, int, int, int>;
  static std::mutex mutex;
  static std::map<Key, MapPair> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const Key key{config, A, B, M, N, K};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 256) cache.clear();  // bounded: a sweep touches few (pointer, shape) pairs
  MapPair maps{encode_2d(A, M, K, bm, WgmmaTmaConfig::bk),
               encode_2d(B, K, N, WgmmaTmaConfig::bk, 32)};
  return cache.emplace(key, maps).first->second;
}

template <int I>
constexpr auto kernel_of() {
  constexpr WgmmaTmaConfig c = kWgmmaTmaConfigs[I];
  return wgmma_tma_kernel<c.bm, c.bn, c.stages, c.producer_registers(), c.consumer_registers()>;
}

template <int I>
void run_config(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream) {
  constexpr WgmmaTmaConfig c = kWgmmaTmaConfigs[I];
  static_assert(c.smem_bytes() ==
                std::size_t(c.stages) * WgTile<c.bm, c.bn, c.stages>::STAGE_BYTES +
                    2 * c.stages * 8 + 1024,
                "host and device agree on the shared-memory size");
  const MapPair& maps = maps_for(I, c.bm, A, B, M, N, K);
  LaunchPlan plan;
  plan.block = {c.threads(), 1, 1};
  plan.grid = {ceil_div(N, c.bn), ceil_div(M, c.bm), 1};
  plan.dynamic_smem_bytes = c.smem_bytes();
  launch(plan, stream, kernel_of<I>(), A, B, C, M, N, K, maps.a, maps.b);
}

template <std::size_t... I>
constexpr std::array<const void*, sizeof...(I)> kernel_table(std::index_sequence<I...>) {
  return {reinterpret_cast<const void*>(kernel_of<I>())...};
}

using RunFn = void (*)(const float*, const float*, float*, int, int, int, cudaStream_t);
template <std::size_t... I>
constexpr std::array<RunFn, sizeof...(I)> run_table(std::index_sequence<I...>) {
  return {&run_config<I>...};
}

}  // namespace

const void* wgmma_tma_kernel(int config) {
  static const auto table = kernel_table(std::make_index_sequence<kWgmmaTmaConfigCount>{});
  return table.at(std::size_t(config));
}

void wgmma_tma_run(int config, const float* A, const float* B, float* C, int M, int N, int K,
                   cudaStream_t stream) {
  static const auto table = run_table(std::make_index_sequence<kWgmmaTmaConfigCount>{});
  table.at(std::size_t(config))(A, B, C, M, N, K, stream);
}

}  // namespace gemm::tensor
