// Warp tiling (siboehm/SGEMM_CUDA kernel 10): the block tile is split into warp tiles and
// each warp's tile into 32 thread tiles (warptile_core.cuh), so a warp's shared reads stay within
// a WM x WN window: A reads are broadcasts among the lanes of a row, B reads are consecutive
// 16-byte chunks (conflict-free without a swizzle), and each thread's TM x TN outputs come in
// 16-byte chunks spread over the warp tile. Loads are conflict_free's: 16-byte global loads, A
// transposed into a skew-padded As. One stage: load, sync, multiply, sync.
#include "vectorized_kernel.cuh"
#include "warptile_core.cuh"

namespace gemm {
namespace {

template <typename T, int BM, int BN, int BK, int WM, int WN, int TM, int TN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    warptile_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  using Tiling = ladder::WarpTiling<T, BM, BN, WM, WN, TM, TN>;
  // conflict_free's As layout; Bs plain (the warp-tiled reads need no swizzle).
  using L = ladder::VectorizedLayout<T, BM, BN, BK, TM, TN, true>;
  using Vec = ladder::vec16_t<T>;
  constexpr int V = ladder::kVec<T>, THREADS = Tiling::THREADS;
  constexpr int A_VECS_PER_ROW = BK / V, B_VECS_PER_ROW = BN / V;
  static_assert(BK % V == 0 && A_VECS_PER_ROW <= 8, "skewed As needs BK / V <= 8");
  static_assert((BM * BK / V) % THREADS == 0 && (BK * BN / V) % THREADS == 0,
                "every thread loads the same number of 16-byte vectors");
  __shared__ __align__(16) T As[L::AS_ELEMS];
  __shared__ __align__(16) T Bs[BK * BN];

  const Tiling t;
  const int tid = threadIdx.x;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  T acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int j = 0; j < BM * BK / V / THREADS; ++j) {
      const int i = tid + j * THREADS, r = i / A_VECS_PER_ROW, c = i % A_VECS_PER_ROW;
      const int gr = row0 + r, gc = k0 + c * V;
      const Vec a = (gr < M && gc < K) ? ladder::load_vec(A + std::int64_t(gr) * K + gc)
                                       : ladder::zero_vec(T());
#pragma unroll
      for (int e = 0; e < V; ++e) As[L::a_row(c * V + e) + r] = ladder::vec_at(a, e);
    }
#pragma unroll
    for (int j = 0; j < BK * BN / V / THREADS; ++j) {
      const int i = tid + j * THREADS, r = i / B_VECS_PER_ROW, c = i % B_VECS_PER_ROW;
      const int gr = k0 + r, gc = col0 + c * V;
      const Vec b = (gr < K && gc < N) ? ladder::load_vec(B + std::int64_t(gr) * N + gc)
                                       : ladder::zero_vec(T());
      ladder::store_vec(&Bs[r * BN + c * V], b);
    }
    __syncthreads();
    ladder::warp_tile_k_tile<T, BK, TM, TN>(
        As, Bs, t, acc, [](int k) { return L::a_row(k); }, [](int k) { return k * BN; });
    __syncthreads();
  }
  ladder::store_tile<T, TM, TN, true, true>(C, M, N, row0, col0, t, acc);
}

template <typename T, LadderTile C>
void add_config(std::vector<Variant>& out) {
  using L = ladder::VectorizedLayout<T, C.bm, C.bn, C.bk, C.tm, C.tn, true>;
  constexpr int threads = (C.bm / C.wm) * (C.bn / C.wn) * 32;
  out.push_back(
      VariantBuilder::of<T>("warptile")
          .params(C.params())
          .launch(kernel_launch<T>(
              block_tile_plan(C.bm, C.bn, threads, 0, (L::AS_ELEMS + C.bk * C.bn) * sizeof(T)),
              warptile_kernel<T, C.bm, C.bn, C.bk, C.wm, C.wn, C.tm, C.tn>))
          .outputs_per_thread(C.outputs_per_thread())
          .precondition([](const GemmShape& s, const DeviceLimits&) {
            return vector_alignment_reason<T>(s);
          })
          .representative()
          .build());
}

}  // namespace

void add_warptile_variants(std::vector<Variant>& out) {
  // 8 warps of 32 x 64 (lanes 4 x 8), thread tiles 8 x 8 in 4-wide chunks.
  add_config<float, LadderTile{.bm = 128, .bn = 128, .bk = 8, .wm = 32, .wn = 64, .tm = 8, .tn = 8}>(out);
  // FP64: 8 warps of 32 x 32 (lanes 4 x 8), thread tiles 8 x 4 in 2-wide chunks.
  add_config<double, LadderTile{.bm = 128, .bn = 64, .bk = 8, .wm = 32, .wn = 32, .tm = 8, .tn = 4}>(out);
}

}  // namespace gemm
