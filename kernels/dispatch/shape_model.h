// The dispatcher's model of a kernel's time at a shape where it was not measured: its measured
// time at the nearest shapes of the sweep, scaled by the work of the busiest SM (tiles, waves,
// K per split). Plain arithmetic, shared by auto.cu and its CPU test.
//
// Why the busiest SM: a grid's blocks go to the SMs in turn, so the kernel ends when the SM that
// got ceil(blocks / SMs) of them has done their work; with several blocks resident per SM they
// share its pipes, so the SM's time follows the work it holds, not the number of waves. A
// block's work is its share of the padded tiles' k-tiles, each tile with one k-tile more for its
// prologue and epilogue (split-K and stream-K divide a tile's among its blocks; the partial
// tiles a split stores and adds are not counted, the measured times carry them); a persistent
// grid's block loops over whole tiles. The tile is the launch plan's where it names one (the
// tuned rung picks its configuration per shape: at 33 x 11008 x 4096 a block computes 64 rows of
// a 64 x 128 tile, and counting the 33 rows alone made the shape look half as costly per block
// as it is), else the variant name's. A kernel without a block tile (the GEMV kernels) counts its
// share of M x N x (K + 1) unpadded. What the
// scaling leaves out (the clock, memory-bound kernels, how well a tile
// hides latency at that size) is in the measured time it scales; a few microseconds of launch
// and of an empty grid do not scale at all.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace gemm::dispatch {

// How a kernel covers a shape: its block tile and its grid.
struct TileGeometry {
  std::int64_t m = 0, n = 0, k = 0;     // the shape
  std::int64_t bm = 0, bn = 0, bk = 1;  // the block tile; 0: the kernel names none
  std::int64_t grid_blocks = 1;         // all blocks (with K slices)
  bool persistent = false;              // each block loops over whole tiles
};

// Measured times below this do not scale with the work (launch, an empty grid's ramp).
constexpr double kFixedMs = 0.004;

inline std::int64_t ceil_div64(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The work of the busiest SM, in multiply-adds of padded tiles (of M x N x K where the kernel
// names no tile).
inline double busiest_sm_work(TileGeometry g, int sms) {
  if (sms <= 0 || g.grid_blocks <= 0) return 0.0;
  const double blocks_on_busiest = double(ceil_div64(g.grid_blocks, sms));
  if (g.bm <= 0 || g.bn <= 0)
    return blocks_on_busiest * double(g.m) * double(g.n) * double(g.k + 1) / double(g.grid_blocks);
  if (g.bk <= 0) g.bk = 1;
  const double tiles = double(ceil_div64(g.m, g.bm)) * double(ceil_div64(g.n, g.bn));
  const double tile_work = double(g.bm) * double(g.bn) * double(ceil_div64(g.k, g.bk) + 1) * double(g.bk);
  if (g.persistent) return blocks_on_busiest * std::ceil(tiles / double(g.grid_blocks)) * tile_work;
  return blocks_on_busiest * tiles * tile_work / double(g.grid_blocks);
}

// A time measured where the busiest SM did `work_measured`, moved to where it does `work_new`.
inline double scaled_ms(double measured_ms, double work_measured, double work_new) {
  if (work_measured <= 0.0) return measured_ms;
  const double fixed = std::min(measured_ms, kFixedMs);
  return fixed + (measured_ms - fixed) * work_new / work_measured;
}

// Distance between shapes: the sum of |log ratio| of M, N and K.
inline double shape_distance(std::int64_t m1, std::int64_t n1, std::int64_t k1, std::int64_t m2,
                             std::int64_t n2, std::int64_t k2) {
  return std::abs(std::log(double(m1) / double(m2))) + std::abs(std::log(double(n1) / double(n2))) +
         std::abs(std::log(double(k1) / double(k2)));
}

// Whether every row of A (K elements) and of B (N elements) starts on a 16-byte boundary: the
// kernels' 16-byte loads, cp.async and TMA paths need it, and the others take a slower path
// (at 4096 x 4096 x 4093 the FP64 tensor-core tiles take 11 to 27% longer than at 4096^3).
inline bool rows_aligned(std::int64_t n, std::int64_t k, int element_bytes) {
  return (n * element_bytes) % 16 == 0 && (k * element_bytes) % 16 == 0;
}

// How far a reference of the other alignment counts beyond its shape distance: one unit of
// |log ratio|, a factor of e in one dimension. A time measured on the other code path is a worse
// guide than one nearby on the same path, but not worse than any shape at all: taken strictly
// after every shape of the same alignment, 333 x 4444 x 555 (K = 555: rows of A off 16-byte
// boundaries) was scaled from 1009 x 1013 x 1019 and 777 x 555 x 333 and ran `tuned` at 91.5% of
// the fastest candidate. The value comes from replaying the model on the H100's evaluation sweep
// of b7f2e83 (gemm-auto-replay): over the suite, each shape left out of its own references, every
// distance from 0 to 1.1 picks as well as the strict order or better (FP64 one shape better), 1.2
// and more no better than the strict order; 1 is the round value inside that range.
constexpr double kMisalignedDistance = 1.0;

// The distance the model ranks a reference shape by: shape_distance, plus kMisalignedDistance
// where its rows' alignment differs from the shape's.
inline double reference_distance(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t ref_m,
                                 std::int64_t ref_n, std::int64_t ref_k, int element_bytes) {
  const bool same = rows_aligned(n, k, element_bytes) == rows_aligned(ref_n, ref_k, element_bytes);
  return shape_distance(m, n, k, ref_m, ref_n, ref_k) + (same ? 0.0 : kMisalignedDistance);
}

// A shape's kind: a few rows (M <= 16), a few columns (N <= 16), or neither. Measurements of
// one kind say nothing of another's kernels (a GEMV's time at M = 8 is no guide at M = 64).
inline int shape_kind(std::int64_t m, std::int64_t n) { return m <= 16 ? 0 : n <= 16 ? 1 : 2; }

// The parameter `key` of a variant name ("split_k/bm:64/bn:128/..."), 0 where it has none or
// it is not a positive number (the model then treats the kernel as naming no tile).
inline std::int64_t name_param(const std::string& name, const std::string& key) {
  const std::string field = "/" + key + ":";
  const std::size_t at = name.find(field);
  if (at == std::string::npos) return 0;
  std::int64_t value = 0;
  for (std::size_t i = at + field.size(); i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    if (value > (std::int64_t(1) << 40)) return 0;  // no tile is this large
    value = value * 10 + (name[i] - '0');
  }
  return value;
}

}  // namespace gemm::dispatch
