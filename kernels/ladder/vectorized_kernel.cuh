// The kernel of the vectorized and conflict_free rungs: blocktile_2d's 2-D register blocking
// with 16-byte global loads and stores, A stored transposed in shared memory (k-major, so a
// thread's TM elements of A for one k are contiguous and come in with LDS.128, like B's TN),
// and 16-byte shared loads of both tiles. (siboehm/SGEMM_CUDA kernel 6.)
//
// CONFLICT_FREE == false is the classic layout. Its transposed store of A has an n-way bank
// conflict: the BK / V lanes that load one row of A (V = 16 / sizeof(T) elements per load)
// write V elements each into V rows of As that are BM elements apart, i.e. into the same banks,
// so one STS phase (128 bytes of lanes) hits each bank BK / V times. Its reads of B also collide:
// a thread's TN columns are TN elements apart from its neighbour's, so with TN / V > 1 the 8
// lanes of an LDS.128 quarter-warp reuse bank groups.
//
// CONFLICT_FREE == true changes only the layouts:
//   As: each group of V rows (one 16-byte load of A) is shifted by A_PAD elements, with A_PAD =
//       (128 bytes / sizeof(T)) / (BK / V): the BK / V lanes that share a row of A now write to
//       distinct 128/(BK/V)-byte windows of the banks (a skewed padding; rows stay 16-byte aligned
//       for the LDS.128 reads because A_PAD is a multiple of V when BK / V <= 8);
//   Bs: the 16-byte chunk c of a row is stored at chunk c ^ ((c / 8) % (TN / V)) (an XOR swizzle
//       within each 128-byte line), so the 8 lanes of a quarter-warp read 8 distinct bank groups.
#pragma once

#include "ladder_common.cuh"

namespace gemm::ladder {

template <typename T, int BM, int BN, int BK, int TM, int TN, bool CONFLICT_FREE>
struct VectorizedLayout {
  static constexpr int V = kVec<T>;
  static constexpr int THREADS = BM * BN / (TM * TN);
  static constexpr int A_VECS_PER_ROW = BK / V;  // 16-byte loads per row of the A tile
  static constexpr int B_VECS_PER_ROW = BN / V;
  static constexpr int B_CHUNKS_PER_THREAD = TN / V;
  static constexpr int A_PAD =
      CONFLICT_FREE && A_VECS_PER_ROW > 1 ? kPhaseElems<T> / A_VECS_PER_ROW : 0;
  static constexpr int AS_ELEMS = BK * BM + (BK / V) * A_PAD;
  static constexpr int BS_ELEMS = BK * BN;
  static constexpr std::size_t SMEM_BYTES = std::size_t(AS_ELEMS + BS_ELEMS) * sizeof(T);

  // Offset of row k (a k index of the tile) in As.
  __host__ __device__ static constexpr int a_row(int k) { return k * BM + (k / V) * A_PAD; }
  // Element offset of 16-byte chunk `chunk` of row k in Bs.
  __host__ __device__ static constexpr int b_chunk(int k, int chunk) {
    return k * BN +
           (CONFLICT_FREE && B_CHUNKS_PER_THREAD > 1
                ? chunk ^ ((chunk / 8) % B_CHUNKS_PER_THREAD)
                : chunk) *
               V;
  }
};

template <typename T, int BM, int BN, int BK, int TM, int TN, bool CONFLICT_FREE>
__global__ void __launch_bounds__(BM * BN / (TM * TN))
    vectorized_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  using L = VectorizedLayout<T, BM, BN, BK, TM, TN, CONFLICT_FREE>;
  using Vec = vec16_t<T>;
  constexpr int V = L::V, THREADS = L::THREADS;
  static_assert(BK % V == 0 && TM % V == 0 && TN % V == 0, "tiles are whole 16-byte vectors");
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads");
  static_assert((BM * BK / V) % THREADS == 0 && (BK * BN / V) % THREADS == 0,
                "every thread loads the same number of 16-byte vectors");
  static_assert(!CONFLICT_FREE || L::A_VECS_PER_ROW <= 8,
                "the skew keeps rows 16-byte aligned only for BK / V <= 8");
  static_assert(!CONFLICT_FREE || L::B_CHUNKS_PER_THREAD <= 8, "swizzle within a 128-byte line");
  static_assert(!CONFLICT_FREE || L::B_CHUNKS_PER_THREAD == 1 || (BN / TN) % 8 == 0,
                "the swizzle assumes each quarter-warp holds 8 consecutive thread columns");
  __shared__ __align__(16) T As[L::AS_ELEMS];  // As[k][m], k-major (transposed)
  __shared__ __align__(16) T Bs[L::BS_ELEMS];  // Bs[k][n]

  const int tid = threadIdx.x;
  const int thread_col = tid % (BN / TN);
  const int thread_row = tid / (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

  T acc[TM][TN] = {};
  T reg_a[TM], reg_b[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int j = 0; j < BM * BK / V / THREADS; ++j) {
      // Consecutive lanes: consecutive 16-byte pieces of a row of A (coalesced).
      const int i = tid + j * THREADS, r = i / L::A_VECS_PER_ROW, c = i % L::A_VECS_PER_ROW;
      const int gr = row0 + r, gc = k0 + c * V;  // K % V == 0: a vector is all in or all out
      const Vec a = (gr < M && gc < K) ? load_vec(A + std::int64_t(gr) * K + gc) : zero_vec(T());
#pragma unroll
      for (int e = 0; e < V; ++e) As[L::a_row(c * V + e) + r] = vec_at(a, e);  // transpose
    }
#pragma unroll
    for (int j = 0; j < BK * BN / V / THREADS; ++j) {
      const int i = tid + j * THREADS, r = i / L::B_VECS_PER_ROW, c = i % L::B_VECS_PER_ROW;
      const int gr = k0 + r, gc = col0 + c * V;  // N % V == 0
      const Vec b = (gr < K && gc < N) ? load_vec(B + std::int64_t(gr) * N + gc) : zero_vec(T());
      store_vec(&Bs[L::b_chunk(r, c)], b);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int i = 0; i < TM; i += V) {
        const Vec a = load_vec(&As[L::a_row(k) + thread_row * TM + i]);
#pragma unroll
        for (int e = 0; e < V; ++e) reg_a[i + e] = vec_at(a, e);
      }
#pragma unroll
      for (int q = 0; q < TN / V; ++q) {
        const Vec b = load_vec(&Bs[L::b_chunk(k, thread_col * (TN / V) + q)]);
#pragma unroll
        for (int e = 0; e < V; ++e) reg_b[q * V + e] = vec_at(b, e);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += reg_a[i] * reg_b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + thread_row * TM + i;
#pragma unroll
    for (int j = 0; j < TN; j += V) {
      const int c = col0 + thread_col * TN + j;
      if (r < M && c < N) {  // N % V == 0: the vector is all in
        Vec out;
        if constexpr (V == 4) {
          out = {acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]};
        } else {
          out = {acc[i][j], acc[i][j + 1]};
        }
        store_vec(C + std::int64_t(r) * N + c, out);
      }
    }
  }
}

}  // namespace gemm::ladder

namespace gemm {

// Both rungs refuse what 16-byte loads of A, B and stores of C cannot do.
template <typename T>
std::optional<std::string> vector_alignment_reason(const GemmShape& s) {
  constexpr int V = ladder::kVec<T>;
  const std::string v = std::to_string(V);
  if (s.k % V)
    return "K % " + v + " != 0: 16-byte loads of A need K a multiple of " + v;
  if (s.n % V)
    return "N % " + v + " != 0: 16-byte loads of B and stores of C need N a multiple of " + v;
  return std::nullopt;
}

// The tiles of vectorized and conflict_free: blocktile_2d's, the same for both, per precision.
inline constexpr LadderTile kVectorizedFp32{.bm = 128, .bn = 128, .bk = 8, .tm = 8, .tn = 8};
inline constexpr LadderTile kVectorizedFp64{.bm = 128, .bn = 64, .bk = 8, .tm = 8, .tn = 4};

template <typename T, LadderTile C, bool CONFLICT_FREE>
VariantBuilder vectorized_variant(const char* family) {
  using L = ladder::VectorizedLayout<T, C.bm, C.bn, C.bk, C.tm, C.tn, CONFLICT_FREE>;
  VariantBuilder b = VariantBuilder::of<T>(family);
  b.params(C.params())
      .launch(kernel_launch<T>(
          block_tile_plan(C.bm, C.bn, L::THREADS, 0, L::SMEM_BYTES),
          ladder::vectorized_kernel<T, C.bm, C.bn, C.bk, C.tm, C.tn, CONFLICT_FREE>))
      .outputs_per_thread(C.outputs_per_thread())
      .precondition([](const GemmShape& s, const DeviceLimits&) {
        return vector_alignment_reason<T>(s);
      });
  return b;
}

// vectorized or conflict_free at its tiles, both precisions.
template <bool CONFLICT_FREE>
void add_vectorized_rung(std::vector<Variant>& out, const char* family, const char* note) {
  out.push_back(vectorized_variant<float, kVectorizedFp32, CONFLICT_FREE>(family)
                    .representative()
                    .note(note)
                    .build());
  out.push_back(vectorized_variant<double, kVectorizedFp64, CONFLICT_FREE>(family)
                    .representative()
                    .note(note)
                    .build());
}

}  // namespace gemm
