// FP64 on the tensor cores with Hopper's large mma.sync shape: m16n8k16 f64 (sm_90 and later),
// 8x the multiply-adds of the Ampere m8n8k4 per instruction, with a multi-stage cp.async pipeline.
//
// Why a second FP64 rung: Hopper runs m8n8k4 at about half the FP64 tensor rate per busy cycle;
// the sm_90 shapes (m16n8k4/k8/k16) are the ones it runs at full rate, and k16 issues the fewest
// instructions. The block tile, its fragments, swizzles and stores: mma_fp64_k16_tile.cuh.
//
// Tails: every copy is predicated (zero-filled outside the matrix), every store bounds-checked.
// The 16-byte copy needs K and N even; otherwise the same kernel with 8-byte copies runs.
// Each lane's outputs are 2 consecutive columns per n8 tile and row: 16-byte stores when N is even.
//
// The instruction exists only in code for compute capability 9.0 and later: the kernel body is
// compiled in those passes alone, and the variants refuse older devices (and builds without such
// a target) before launch.
//
// SASS: DMMA.16x8x16 (tests/cpu/sass_test.py: every kernel of this family executes it)
#include <string>

#include "mma_fp64_k16_tile.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

// P: the Fp64K16Tile of a configuration (kernels take their configuration as a type).
template <typename P>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    mma_fp64_m16n8k16_kernel(const double* A, const double* B, double* C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  typename P::Acc acc;
  P::mainloop(acc, A, B, M, N, K, MmaSyncThread<P::CONFIG>(), 0, (K + P::BK - 1) / P::BK, smem_raw);
  // Computed again rather than held across the mainloop: registers are tight at 32 x 64 warp tiles.
  P::store(acc, C, M, N, MmaSyncThread<P::CONFIG>::reread());
}

template <MmaSyncConfig C>
void add_config(std::vector<Variant>& out) {
  out.push_back(mma_sync_variant<double, C>("mma_fp64_m16n8k16",
                                            mma_fp64_m16n8k16_kernel<Fp64K16Tile<C, 2>>,
                                            mma_fp64_m16n8k16_kernel<Fp64K16Tile<C, 1>>)
                    .precondition(dmma_k16_reason)
                    .note("compute capability 9.0+; 16-byte cp.async when K and N are even, "
                          "8-byte copies otherwise")
                    .build());
}

}  // namespace

void add_mma_fp64_m16n8k16_variants(std::vector<Variant>& out) {
  // The representative: fastest of these at 4096^3 on an H100 (49.2 TFLOP/s against 45.8 for
  // BK 16 with 4 stages: half the k-tile barriers). The others are tagged tuning; compare them:
  // gemm-bench --tags=tensor_core,tuning,reference --precisions=fp64 --sizes=4096
  //   --benchmark_filter='^gemm/fp64/(cublas|mma_fp64_m16n8k16)/'
  for_each_config<MmaSyncConfig{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 3,
                                .role = Role::representative},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 32, .wn = 64, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 16, .wm = 64, .wn = 32, .stages = 3},
                  MmaSyncConfig{.bm = 128, .bn = 64, .bk = 16, .wm = 64, .wn = 32, .stages = 4}>(
      [&]<MmaSyncConfig C>() { add_config<C>(out); });
}

}  // namespace gemm
