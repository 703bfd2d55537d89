#include "access_model.h"

#include <algorithm>
#include <map>
#include <set>

namespace gemm::test {
namespace {

constexpr int kWarp = 32;

struct Lane {
  int r, c;  // position in the block's tile of C, after the thread mapping
};

// Lanes of warp w in a bx x by block: linear thread id = tx + ty * bx.
std::vector<Lane> warp_lanes(Mapping m, int bx, int by, int w) {
  std::vector<Lane> lanes;
  for (int t = w * kWarp; t < std::min((w + 1) * kWarp, bx * by); ++t) {
    const int tx = t % bx, ty = t / bx;
    lanes.push_back(m == Mapping::row ? Lane{ty, tx} : Lane{tx, ty});
  }
  return lanes;
}

int warps_per_block(int bx, int by) { return (bx * by + kWarp - 1) / kWarp; }

}  // namespace

int bank_conflict_degree(const std::vector<std::uint64_t>& addrs, int access_bytes) {
  std::map<int, std::set<std::uint64_t>> words_per_bank;
  for (auto a : addrs)
    for (std::uint64_t w = a / 4; w <= (a + access_bytes - 1) / 4; ++w)
      words_per_bank[int(w % 32)].insert(w);
  std::size_t worst = 0;
  for (const auto& [bank, words] : words_per_bank) worst = std::max(worst, words.size());
  return int(worst);
}

int conflict_degree_per_phase(const std::vector<std::uint64_t>& addrs, int element_bytes) {
  if (element_bytes <= 4) return bank_conflict_degree(addrs, element_bytes);
  // 64-bit elements are served by half-warps: 32 distinct doubles need 2 passes, no conflict.
  const std::size_t mid = std::min<std::size_t>(16, addrs.size());
  const std::vector<std::uint64_t> lo(addrs.begin(), addrs.begin() + mid), hi(addrs.begin() + mid, addrs.end());
  return std::max(bank_conflict_degree(lo, element_bytes),
                  hi.empty() ? 0 : bank_conflict_degree(hi, element_bytes));
}

int shared_wavefronts(const std::vector<std::uint64_t>& addrs, int access_bytes) {
  auto lanes = [&](std::size_t first, std::size_t count) {
    const std::size_t end = std::min(addrs.size(), first + count);
    return std::vector<std::uint64_t>(addrs.begin() + std::min(first, end), addrs.begin() + end);
  };
  auto degree = [&](const std::vector<std::uint64_t>& part) {
    return part.empty() ? 0 : bank_conflict_degree(part, access_bytes);
  };
  if (access_bytes <= 4) return degree(addrs);
  if (access_bytes == 8) return degree(lanes(0, 16)) + degree(lanes(16, 16));
  // 128-bit: quarter-warps. Two of them share a wavefront when together they are conflict-free
  // and the 16-byte chunks they read, counted per quarter-warp, fit in one 128-byte wavefront
  // (at most 8): broadcasts pair, two quarter-warps that each read 8 chunks do not.
  auto chunks = [&](const std::vector<std::uint64_t>& part) {
    std::set<std::uint64_t> distinct;
    for (auto a : part) distinct.insert(a / 16);
    return int(distinct.size());
  };
  int total = 0;
  for (std::size_t half = 0; half < 32; half += 16) {
    const auto first = lanes(half, 8), second = lanes(half + 8, 8);
    if (degree(lanes(half, 16)) <= 1 && chunks(first) + chunks(second) <= 8)
      total += degree(lanes(half, 16));
    else
      total += degree(first) + degree(second);
  }
  return total;
}

int global_sectors(const std::vector<std::uint64_t>& addrs, int access_bytes) {
  std::set<std::uint64_t> sectors;
  for (auto a : addrs)
    for (std::uint64_t s = a / 32; s <= (a + access_bytes - 1) / 32; ++s) sectors.insert(s);
  return int(sectors.size());
}

// Calls fn(active) for every warp of a naive kernel's grid, with its lanes' (row, col) in C.
template <typename Fn>
void for_each_naive_warp(Mapping m, int bx, int by, const GemmShape& s, Fn&& fn) {
  // Naive kernels: grid.x covers columns, grid.y rows; block tile is bx x by after mapping.
  const int tile_cols = m == Mapping::row ? bx : by;
  const int tile_rows = m == Mapping::row ? by : bx;
  const std::int64_t grid_x = (s.n + tile_cols - 1) / tile_cols;
  const std::int64_t grid_y = (s.m + tile_rows - 1) / tile_rows;
  std::vector<std::pair<std::int64_t, std::int64_t>> active;
  for (std::int64_t gy = 0; gy < grid_y; ++gy)
    for (std::int64_t gx = 0; gx < grid_x; ++gx)
      for (int w = 0; w < warps_per_block(bx, by); ++w) {
        active.clear();
        for (const Lane& l : warp_lanes(m, bx, by, w)) {
          const std::int64_t row = gy * tile_rows + l.r, col = gx * tile_cols + l.c;
          if (row < s.m && col < s.n) active.push_back({row, col});
        }
        if (!active.empty()) fn(active);  // a warp with no active lane issues nothing
      }
}

AccessCount naive_global_loads(Mapping m, int bx, int by, const GemmShape& s, int eb) {
  AccessCount count;
  std::vector<std::uint64_t> a_addr, b_addr;
  for_each_naive_warp(m, bx, by, s, [&](const auto& active) {
    for (std::int64_t j = 0; j < s.k; ++j) {
      a_addr.clear();
      b_addr.clear();
      for (auto [row, col] : active) {
        a_addr.push_back(std::uint64_t(row * s.k + j) * eb);
        b_addr.push_back(std::uint64_t(j * s.n + col) * eb);
      }
      count.requests += 2;
      count.units += global_sectors(a_addr, eb) + global_sectors(b_addr, eb);
    }
  });
  return count;
}

AccessCount naive_global_stores(Mapping m, int bx, int by, const GemmShape& s, int eb) {
  AccessCount count;
  for_each_naive_warp(m, bx, by, s, [&](const auto& active) {
    std::vector<std::uint64_t> addr;
    for (auto [row, col] : active) addr.push_back(std::uint64_t(row * s.n + col) * eb);
    count.requests += 1;
    count.units += global_sectors(addr, eb);
  });
  return count;
}

AccessCount tiled_global_loads(Mapping m, int tile, const GemmShape& s, int eb) {
  AccessCount count;
  const std::int64_t grid_x = (s.n + tile - 1) / tile, grid_y = (s.m + tile - 1) / tile;
  std::vector<std::uint64_t> a_addr, b_addr;
  for (std::int64_t gy = 0; gy < grid_y; ++gy)
    for (std::int64_t gx = 0; gx < grid_x; ++gx)
      for (int w = 0; w < warps_per_block(tile, tile); ++w)
        for (std::int64_t k0 = 0; k0 < s.k; k0 += tile) {
          a_addr.clear();
          b_addr.clear();
          for (const Lane& l : warp_lanes(m, tile, tile, w)) {
            const std::int64_t row = gy * tile + l.r, col = gx * tile + l.c;
            if (row < s.m && k0 + l.c < s.k) a_addr.push_back(std::uint64_t(row * s.k + k0 + l.c) * eb);
            if (k0 + l.r < s.k && col < s.n) b_addr.push_back(std::uint64_t((k0 + l.r) * s.n + col) * eb);
          }
          for (const auto* addrs : {&a_addr, &b_addr})
            if (!addrs->empty()) {
              count.requests += 1;
              count.units += global_sectors(*addrs, eb);
            }
        }
  return count;
}

int row_read_bytes(int tile, int pad, int eb) {
  const int pitch = (tile + pad) * eb;
  for (int width : {16, 8})
    if (width >= eb && pitch % width == 0 && tile * eb >= width) return width;
  return eb;
}

TiledSharedLoads tiled_shared_loads(Mapping m, int tile, int pad, const GemmShape& s, int eb) {
  // Every k0 step has the same access pattern in every block: count one and multiply.
  TiledSharedLoads step;
  const std::uint64_t row_bytes = std::uint64_t(tile + pad) * eb;
  const std::uint64_t b_base = std::uint64_t(tile) * row_bytes;  // tile_b follows tile_a
  const int a_width = row_read_bytes(tile, pad, eb);
  const int per_a_load = a_width / eb;
  for (int w = 0; w < warps_per_block(tile, tile); ++w) {
    for (int i = 0; i < tile; i += per_a_load) {  // tile_a[r][i .. i + per_a_load)
      std::vector<std::uint64_t> addr;
      for (const Lane& l : warp_lanes(m, tile, tile, w))
        addr.push_back(l.r * row_bytes + std::uint64_t(i) * eb);
      step.tile_a.requests += 1;
      step.tile_a.units += shared_wavefronts(addr, a_width);
      step.tile_a.n_way = std::max(step.tile_a.n_way, conflict_degree_per_phase(addr, eb));
    }
    for (int i = 0; i < tile; ++i) {  // tile_b[i][c]
      std::vector<std::uint64_t> addr;
      for (const Lane& l : warp_lanes(m, tile, tile, w))
        addr.push_back(b_base + i * row_bytes + std::uint64_t(l.c) * eb);
      step.tile_b.requests += 1;
      step.tile_b.units += shared_wavefronts(addr, eb);
      step.tile_b.n_way = std::max(step.tile_b.n_way, conflict_degree_per_phase(addr, eb));
    }
  }
  const double times = double((s.k + tile - 1) / tile) * double((s.n + tile - 1) / tile) *
                       double((s.m + tile - 1) / tile);
  for (AccessCount* c : {&step.tile_a, &step.tile_b}) {
    c->requests *= times;
    c->units *= times;
  }
  return step;
}

}  // namespace gemm::test
