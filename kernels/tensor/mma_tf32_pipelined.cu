// TF32 mma.sync, pipelined: the mma_tf32 rung plus a STAGES-deep cp.async pipeline, XOR-swizzled
// (conflict-free) shared tiles, ldmatrix for the A fragments and 16-byte loads for B
// (mma_tf32_tile.cuh: the layout, the fragments and the stores). Like mma_tf32, its operands are
// rounded to the nearest TF32: mma_tf32 rounds each element once on its way into shared memory;
// here the copies bypass the registers, so each warp rounds the fragments it loads.
//
// Tails: copies are predicated with zero fill, stores bounds-checked. 16-byte copies need K and N
// multiples of 4; otherwise the same kernel with 4-byte copies runs (any shape).
//
// SASS: HMMA (tests/cpu/sass_test.py: every kernel of this family executes it)
// SASS rounds to TF32 (tests/cpu/sass_test.py: the cvt.rna of what passes through registers)
#include "mma_tf32_tile.cuh"

namespace gemm {
namespace {

using namespace gemm::tensor;

// P: the Tf32PipeTileOf of a configuration (kernels take their configuration as a type).
template <typename P>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    mma_tf32_pipelined_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const MmaSyncThread<P::CONFIG> th;
  typename P::Acc acc;
  P::mainloop(acc, A, B, M, N, K, th, 0, (K + P::BK - 1) / P::BK, smem_raw);
  P::store(acc, C, M, N, th);
}

template <MmaSyncConfig C, Tf32Rounding R = Tf32Rounding::nearest>
void add_config(std::vector<Variant>& out) {
  const bool rounds = R == Tf32Rounding::nearest;
  std::vector<Param> params = C.params();
  if (!rounds) params.push_back({"truncated", 1});  // named only where set, like mbar
  Variant v = mma_sync_variant<float, C>("mma_tf32_pipelined",
                                         mma_tf32_pipelined_kernel<Tf32PipeTileOf<C, 4, R>>,
                                         mma_tf32_pipelined_kernel<Tf32PipeTileOf<C, 1, R>>)
                  .params(params)
                  .compute(Compute::tf32)
                  .note(std::string("16-byte cp.async when K and N are multiples of 4, 4-byte "
                                    "copies otherwise; ") +
                        (rounds ? "A and B rounded to TF32 (cvt.rna) in the fragment registers"
                                : "A and B truncated to TF32 by the tensor core (no cvt.rna): "
                                  "what the rounding costs, against the same configuration"))
                  .build();
  v.unit_roundoff = tf32_unit_roundoff(R, R);
  out.push_back(std::move(v));
}

}  // namespace

void add_mma_tf32_pipelined_variants(std::vector<Variant>& out) {
  // The representative: mma_tf32's tiles (256 x 128, k-tiles of 32) and the stages of wgmma_tma
  // above it; the last instance is the representative with its operands truncated.
  for_each_config<MmaSyncConfig{.bm = 256, .bn = 128, .bk = 32, .wm = 64, .wn = 64, .stages = 3,
                                .role = Role::representative},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 3,
                                .min_blocks = 2},
                  MmaSyncConfig{.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32, .stages = 4},
                  MmaSyncConfig{.bm = 128, .bn = 256, .bk = 32, .wm = 64, .wn = 64, .stages = 3}>(
      [&]<MmaSyncConfig C>() { add_config<C>(out); });
  add_config<MmaSyncConfig{.bm = 256, .bn = 128, .bk = 32, .wm = 64, .wn = 64, .stages = 3},
             Tf32Rounding::truncate>(out);
}

}  // namespace gemm
