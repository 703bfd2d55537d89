// What the counters must read, derived from the kernels' access patterns alone: every warp,
// every load instruction, every lane's address. Global loads: one request per warp-level
// instruction with an active lane, one sector per distinct 32-byte segment its lanes touch.
// Shared loads: shared memory has 32 banks of 4 bytes. The conflict degree of an access
// pattern (n-way) is the largest number of distinct 4-byte words that the warp's lanes touch in
// one bank. What the hardware pays for it depends on the instruction width: 32-bit loads are
// served for the whole warp, one wavefront per conflict level; 64-bit loads by half-warps and
// 128-bit loads by quarter-warps (CUDA C Programming Guide, shared memory of cc >= 5.x). On
// sm_90 two quarter-warps whose union is conflict-free share one wavefront when the 16-byte
// chunks they read, counted per quarter-warp, number 8 or fewer: this last rule is the one input
// of the model taken from measurement (the counters of broadcast LDS.128 loads in the shared
// kernels, and of the warp-tiled rung's B reads, where two quarter-warps reading the same 8
// chunks take a wavefront each).
//
// Instruction widths: the multiply loop is unrolled, so ptxas merges a thread's reads of
// consecutive elements of a tile_a row into the widest load (LDS.128, LDS.64) that the row's
// alignment allows: 16-byte loads for unpadded rows, element-wide loads for rows padded by one
// element (SASS of sm_90, checked with cuobjdump). tile_b is read down a column: element-wide.
#pragma once

#include <cstdint>
#include <vector>

#include "gemm_types.h"

namespace gemm::test {

enum class Mapping { row, col };  // which index of C threadIdx.x walks

struct AccessCount {
  double requests = 0;
  double units = 0;  // sectors (global) or wavefronts (shared)
  int n_way = 0;     // shared: worst conflict degree of the access pattern over all loads
  double per_request() const { return units / requests; }
};

// Conflict degree of one warp-wide shared access (lanes in order) of access_bytes per lane.
int bank_conflict_degree(const std::vector<std::uint64_t>& byte_addresses, int access_bytes);
// The same per hardware phase of an element-wide access (half-warps for 64-bit elements).
int conflict_degree_per_phase(const std::vector<std::uint64_t>& byte_addresses, int element_bytes);
// Wavefronts the hardware spends on that access, per the phase rules above.
int shared_wavefronts(const std::vector<std::uint64_t>& byte_addresses, int access_bytes);
// Sectors of one warp-wide global access.
int global_sectors(const std::vector<std::uint64_t>& byte_addresses, int access_bytes);

// naive_row / naive_col / naive_tile with bx x by blocks (tile == row mapping).
AccessCount naive_global_loads(Mapping m, int bx, int by, const GemmShape& s, int elem_bytes);
AccessCount naive_global_stores(Mapping m, int bx, int by, const GemmShape& s, int elem_bytes);

// The static-tile shared kernels: global loads of the tiles, and shared loads of the multiply
// loop, for a TILE x TILE block with rows padded by `pad` elements.
AccessCount tiled_global_loads(Mapping m, int tile, const GemmShape& s, int elem_bytes);
struct TiledSharedLoads {
  AccessCount tile_a, tile_b;
  AccessCount total() const {
    return {tile_a.requests + tile_b.requests, tile_a.units + tile_b.units,
            tile_a.n_way > tile_b.n_way ? tile_a.n_way : tile_b.n_way};
  }
};
TiledSharedLoads tiled_shared_loads(Mapping m, int tile, int pad, const GemmShape& s,
                                    int elem_bytes);
// Bytes per load of a tile_a row: the widest of 16, 8, elem_bytes that divides the row pitch.
int row_read_bytes(int tile, int pad, int elem_bytes);

}  // namespace gemm::test
