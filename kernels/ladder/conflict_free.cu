// Conflict-free shared layout: vectorized's kernel and tiles with As skew-padded (each group
// of 16/sizeof(T) rows shifted so the lanes that transpose one row of A write distinct banks)
// and Bs XOR-swizzled in 16-byte chunks (so an LDS.128 quarter-warp reads 8 distinct bank groups).
// Shown against vectorized at the same tiles: smem_st wavefronts per request fall from the n-way
// conflict to 1 per phase, and the B reads lose their 2-way conflict.
#include "vectorized_kernel.cuh"

namespace gemm {

void add_conflict_free_variants(std::vector<Variant>& out) {
  add_vectorized_rung<true>(out, "conflict_free", "skew-padded As, XOR-swizzled Bs");
}

}  // namespace gemm
