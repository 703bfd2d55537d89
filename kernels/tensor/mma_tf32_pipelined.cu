// TF32 mma.sync, pipelined: the mma_tf32 rung plus a STAGES-deep cp.async pipeline, XOR-swizzled
// (conflict-free) shared tiles, ldmatrix for the A fragments and 16-byte loads for B
// (mma_tf32_tile.cuh: the layout, the fragments and the stores).
//
// Tails: copies are predicated with zero fill, stores bounds-checked. 16-byte copies need K and N
// multiples of 4; otherwise the same kernel with 4-byte copies runs (any shape).
//
// SASS: HMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
#include "mma_tf32_tile.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

// P: the Tf32PipeTile of a configuration (kernels take their configuration as a type).
template <typename P>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    mma_tf32_pipelined_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const MmaSyncThread<P::CONFIG> th;
  typename P::Acc acc;
  P::mainloop(acc, A, B, M, N, K, th, 0, (K + P::BK - 1) / P::BK, smem_raw);
  P::store(acc, C, M, N, th);
}

template <MmaSyncConfig C>
void add_config(std::vector<Variant>& out) {
  out.push_back(mma_sync_variant<float, C>("mma_tf32_pipelined",
                                           mma_tf32_pipelined_kernel<Tf32PipeTile<C, 4>>,
                                           mma_tf32_pipelined_kernel<Tf32PipeTile<C, 1>>)
                    .compute(Compute::tf32)
                    .note("16-byte cp.async when K and N are multiples of 4, 4-byte copies "
                          "otherwise; FP32 inputs truncated to TF32 by the tensor core")
                    .build());
}

}  // namespace

void add_mma_tf32_pipelined_variants(std::vector<Variant>& out) {
  for_each_config<MmaSyncConfig{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 3,
                                .min_blocks = 2, .role = Role::representative},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 256, .bk = 32, .wm = 64, .wn = 64, .stages = 3},
                  MmaSyncConfig{.bm = 256, .bn = 128, .bk = 32, .wm = 64, .wn = 64, .stages = 3}>(
      [&]<MmaSyncConfig C>() { add_config<C>(out); });
}

}  // namespace gemm
