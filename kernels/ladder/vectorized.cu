// vectorized: blocktile_2d with 16-byte global loads (requests fall by 16 / sizeof(T)), A
// transposed into shared memory while it is stored, and 16-byte shared loads of both tiles.
// Its layout keeps the classic n-way conflict of the transposed store (see vectorized_kernel.cuh);
// conflict_free (conflict_free.cu) is the same kernel with that fixed.
#include "vectorized_kernel.cuh"

namespace gemm {

void add_vectorized_variants(std::vector<Variant>& out) {
  add_vectorized_rung<false>(
      out, "vectorized", "transposed store of A has a BK*sizeof(T)/16-way bank conflict by design");
}

}  // namespace gemm
