// Counter evidence for the CUDA-core ladder (kernels/ladder/): each rung's claim is a counter
// compared with the value its tile parameters predict. The expected values are derived here from
// the parameters and the layouts the kernels document (lane by lane, through access_model.h's
// bank and sector rules), never copied from a run. Shapes are whole tiles, so every lane of every
// warp is active and the counts are exact.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "access_model.h"
#include "counters.h"
#include "counter_test_support.h"
#include "gpu_test_support.h"
#include "metric_catalogue.h"
#include "tags.h"

namespace gemm::test {
namespace {

const GemmShape kShape{512, 512, 512};  // whole tiles for every representative configuration

// The tile parameters of a rung's representative, from its fields in the registry.
struct Tiles {
  int bm, bn, bk, tm, tn, wm = 0, wn = 0;
};
Tiles tiles_of(const Variant& v) {
  return {int(param(v, "bm")), int(param(v, "bn")), int(param(v, "bk")), int(param(v, "tm")),
          int(param(v, "tn", 1)), int(param(v, "wm")), int(param(v, "wn"))};
}
Tiles blocktile_2d_tiles(Precision p) { return tiles_of(representative("blocktile_2d", p)); }
Tiles warptile_tiles(Precision p) { return tiles_of(representative("warptile", p)); }

int bytes_of(Precision p) { return int(element_size(p)); }

// Blocks x k-tiles: every count below is per block per k-tile, times this.
double block_k_tiles(const Tiles& t, const GemmShape& s) {
  return double(s.m / t.bm) * double(s.n / t.bn) * double(s.k / t.bk);
}

// --- the layouts of rungs 3-5, as their headers document them -----------------------------------
// Lane addresses per warp instruction, in bytes from each array's start (a uniform shift of all
// lanes changes no bank count, so where the compiler puts each array does not matter).
struct Layout {
  Tiles t;
  int eb;              // bytes per element
  bool skew_a;         // As groups of V rows shifted by (128 / eb) / (BK / V) elements
  bool swizzle_b;      // Bs 16-byte chunk c stored at c ^ ((c / 8) % (TN / V))
  bool warp_tiled;     // rung 5 thread mapping
  int v() const { return 16 / eb; }
  int threads() const { return t.bm * t.bn / (t.tm * t.tn); }
  std::int64_t a_row(int k) const {
    const int vecs = t.bk / v();
    const int pad = skew_a && vecs > 1 ? (128 / eb) / vecs : 0;
    return std::int64_t(k) * t.bm + (k / v()) * pad;
  }
  int b_chunk(int c) const {
    const int cpt = t.tn / v();
    return swizzle_b && cpt > 1 ? c ^ ((c / 8) % cpt) : c;
  }
};

// Every warp-level instruction of one block and one k-tile, as lists of lane byte addresses.
using Access = std::vector<std::uint64_t>;
struct KTileAccesses {
  std::vector<Access> gld;             // 16-byte global loads (A then B)
  std::vector<std::pair<Access, int>> sts;  // shared stores with their width in bytes
  std::vector<Access> lds;             // 16-byte shared loads
};

KTileAccesses rung_accesses(const Layout& L, const GemmShape& s) {
  const Tiles& t = L.t;
  const int V = L.v(), T = L.threads(), eb = L.eb;
  KTileAccesses out;
  for (int w = 0; w < T / 32; ++w) {
    // Global loads: consecutive threads take consecutive 16-byte pieces of a row.
    for (int j = 0; j < t.bm * t.bk / V / T; ++j) {
      Access g;
      std::vector<Access> st(V);
      for (int lane = 0; lane < 32; ++lane) {
        const int i = w * 32 + lane + j * T, r = i / (t.bk / V), c = i % (t.bk / V);
        g.push_back(std::uint64_t(std::int64_t(r) * s.k + c * V) * eb);
        for (int e = 0; e < V; ++e) st[e].push_back(std::uint64_t(L.a_row(c * V + e) + r) * eb);
      }
      out.gld.push_back(g);
      for (auto& a : st) out.sts.push_back({a, eb});  // element-wide transposed stores
    }
    for (int j = 0; j < t.bk * t.bn / V / T; ++j) {
      Access g, st;
      for (int lane = 0; lane < 32; ++lane) {
        const int i = w * 32 + lane + j * T, r = i / (t.bn / V), c = i % (t.bn / V);
        g.push_back(std::uint64_t(std::int64_t(r) * s.n + c * V) * eb);
        st.push_back(std::uint64_t(r * t.bn + L.b_chunk(c) * V) * eb);
      }
      out.gld.push_back(g);
      out.sts.push_back({st, 16});
    }
    // Shared loads of the multiply loop.
    for (int k = 0; k < t.bk; ++k) {
      for (int i = 0; i < t.tm / V; ++i) {
        Access a;
        for (int lane = 0; lane < 32; ++lane) {
          const int tid = w * 32 + lane;
          int m;
          if (L.warp_tiled) {
            const int lm = lane / (t.wn / t.tn), wm = w / (t.bn / t.wn);
            m = wm * t.wm + i * (t.wm / t.tm) * V + lm * V;
          } else {
            m = tid / (t.bn / t.tn) * t.tm + i * V;
          }
          a.push_back(std::uint64_t(L.a_row(k) + m) * eb);
        }
        out.lds.push_back(a);
      }
      for (int q = 0; q < t.tn / V; ++q) {
        Access b;
        for (int lane = 0; lane < 32; ++lane) {
          const int tid = w * 32 + lane;
          int chunk;
          if (L.warp_tiled) {
            const int ln = lane % (t.wn / t.tn), wn = w % (t.bn / t.wn);
            chunk = (wn * t.wn + q * (t.wn / t.tn) * V + ln * V) / V;
          } else {
            chunk = tid % (t.bn / t.tn) * (t.tn / V) + q;
          }
          b.push_back(std::uint64_t(k * t.bn + L.b_chunk(chunk) * V) * eb);
        }
        out.lds.push_back(b);
      }
    }
  }
  return out;
}

Layout vectorized_layout(Precision p, bool conflict_free) {
  return {tiles_of(representative(conflict_free ? "conflict_free" : "vectorized", p)), bytes_of(p),
          conflict_free, conflict_free, false};
}
Layout warptile_layout(Precision p) { return {warptile_tiles(p), bytes_of(p), true, false, true}; }

// --- FMAs --------------------------------------------------------------------------------------

TEST(CountersLadder, EveryRungDoesExactlyMNKFmasOnWholeTiles) {
  GEMM_REQUIRE_COUNTERS();
  // Zero-filled tails would add FMAs; on whole tiles each output takes exactly K of them.
  for (const auto& v : all_variants()) {
    if (!v.has_tag(tag::ladder) || !v.has_tag(tag::tracked)) continue;
    const CounterValues c = measure(v, kShape);
    const char* fma = v.precision == Precision::fp32 ? "ffma_thread_inst" : "dfma_thread_inst";
    expect_count(c.at(fma), kShape.work(), v.name() + " " + to_string(v.precision) + " " + fma);
  }
}

// --- shared loads per k-step -----------------------------------------------------------------

TEST(CountersLadder, SharedLoadInstructionsFollowTheThreadTile) {
  GEMM_REQUIRE_COUNTERS();
  // Per warp and k-tile. Rung 1 (BM=BN=64, BK=8, TM=8): each thread reads its TM rows of the A
  // tile along k, which the unrolled loop merges into 16-byte loads (BK * eb / 16 per row), and
  // one element of B per k. Rung 2: the same for A, and its TN consecutive B elements per k in
  // TN * eb / 16 loads. Rungs 3-5: TM / V + TN / V 16-byte loads per k.
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    const int eb = bytes_of(p), V = 16 / eb;
    const std::string what = std::string(" ") + to_string(p);
    {
      const Variant& v = representative("blocktile_1d", p);
      const Tiles t = tiles_of(v);
      const double per = t.tm * (t.bk * eb / 16) + t.bk;
      const double warps = t.bm * t.bn / t.tm / 32;
      expect_count(measure(v, kShape).at("smem_ld_requests"),
                   per * warps * block_k_tiles(t, kShape), v.name() + what);
    }
    {
      const Variant& v = representative("blocktile_2d", p);
      const Tiles t = tiles_of(v);
      const double per = t.tm * (t.bk * eb / 16) + t.bk * (t.tn * eb / 16);
      const double warps = t.bm * t.bn / (t.tm * t.tn) / 32;
      expect_count(measure(v, kShape).at("smem_ld_requests"),
                   per * warps * block_k_tiles(t, kShape), v.name() + what);
    }
    for (const char* family : {"vectorized", "conflict_free"}) {
      const Variant& v = representative(family, p);
      const Tiles t = tiles_of(v);
      const double per = t.bk * (t.tm / V + t.tn / V);
      const double warps = t.bm * t.bn / (t.tm * t.tn) / 32;
      const CounterValues c = measure(v, kShape);
      expect_count(c.at("smem_ld_requests"), per * warps * block_k_tiles(t, kShape),
                   v.name() + what);
    }
    {
      const Variant& v = representative("warptile", p);
      const Tiles t = tiles_of(v);
      const double per = t.bk * (t.tm / V + t.tn / V);
      const double warps = (t.bm / t.wm) * (t.bn / t.wn);
      expect_count(measure(v, kShape).at("smem_ld_requests"),
                   per * warps * block_k_tiles(t, kShape), v.name() + what);
    }
  }
}

TEST(CountersLadder, RegisterBlockingRaisesFmasPerSharedLoad) {
  GEMM_REQUIRE_COUNTERS();
  // Thread FMAs per warp shared-load instruction = 32 * (FMAs per thread per k-tile) / (loads per
  // warp per k-tile): rung 1: 32 * TM * BK / (TM * BK * eb / 16 + BK); rung 2: 32 * TM * TN * BK
  // / (TM * BK * eb / 16 + BK * TN * eb / 16) (at 8 x 8 FP32: 32 * 512 / 32 = 512, against rung
  // 1's 32 * 64 / 24).
  const int eb = 4;
  const Variant& v1 = representative("blocktile_1d", Precision::fp32);
  const Variant& v2 = representative("blocktile_2d", Precision::fp32);
  const Tiles t1 = tiles_of(v1), t2 = tiles_of(v2);
  const double rung1 = 32.0 * t1.tm * t1.bk / (t1.tm * t1.bk * eb / 16 + t1.bk);
  const double rung2 =
      32.0 * t2.tm * t2.tn * t2.bk / (t2.tm * (t2.bk * eb / 16) + t2.bk * (t2.tn * eb / 16));
  EXPECT_GT(rung2, rung1);
  EXPECT_NEAR(measure(v1, kShape).at("ffma_per_smem_ld"), rung1, 1e-9 * rung1);
  EXPECT_NEAR(measure(v2, kShape).at("ffma_per_smem_ld"), rung2, 1e-9 * rung2);
}

// --- 16-byte global loads ------------------------------------------------------------------------

TEST(CountersLadder, SixteenByteLoadsCutGlobalRequestsByTheVectorWidth) {
  GEMM_REQUIRE_COUNTERS();
  // Same tiles: rung 2 issues (BM*BK + BK*BN) / threads element loads per warp per k-tile, rung 3
  // V = 16 / eb times fewer 16-byte loads, touching the same sectors.
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    const Tiles t = blocktile_2d_tiles(p);
    const Tiles tv = tiles_of(representative("vectorized", p));
    ASSERT_EQ(std::tie(t.bm, t.bn, t.bk, t.tm, t.tn), std::tie(tv.bm, tv.bn, tv.bk, tv.tm, tv.tn))
        << "rung 3 is rung 2 with 16-byte loads, at the same tiles";
    const int V = 16 / bytes_of(p);
    const double threads = t.bm * t.bn / (t.tm * t.tn), warps = threads / 32;
    const double scalar = (t.bm * t.bk + t.bk * t.bn) / threads * warps * block_k_tiles(t, kShape);
    const CounterValues plain = measure(representative("blocktile_2d", p), kShape);
    const CounterValues vec = measure(representative("vectorized", p), kShape);
    const std::string what = std::string(" ") + to_string(p);
    expect_count(plain.at("gld_requests"), scalar, "blocktile_2d gld_requests" + what);
    expect_count(vec.at("gld_requests"), scalar / V, "vectorized gld_requests" + what);
    EXPECT_DOUBLE_EQ(plain.at("gld_requests") / vec.at("gld_requests"), V) << what;
    // Sectors: each 16-byte load's lanes, from the addresses.
    const KTileAccesses acc = rung_accesses(vectorized_layout(p, false), kShape);
    double sectors = 0;
    for (const Access& a : acc.gld) sectors += global_sectors(a, 16);
    expect_count(vec.at("gld_sectors"), sectors * block_k_tiles(t, kShape),
                 "vectorized gld_sectors" + what);
    EXPECT_DOUBLE_EQ(vec.at("gld_sectors"), plain.at("gld_sectors")) << what;
  }
}

// --- bank conflicts of the transposed store and the layouts that remove them --------------------

TEST(CountersLadder, TransposedStoreConflictsNWayAndTheSkewRemovesIt) {
  GEMM_REQUIRE_COUNTERS();
  // Rung 3 stores each 16-byte piece of A as V elements into V rows of As that are BM elements
  // apart: the BK / V lanes that share a row of A write to the same banks, an n-way conflict with
  // n = BK / V per 128-byte phase (FP32 BK=8: 2-way; FP64 BK=8: 4-way). Rung 4's skew pads each
  // group of V rows so those lanes fall into distinct banks: one wavefront per phase.
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    const int eb = bytes_of(p);
    const std::string what = std::string(" ") + to_string(p);
    for (bool fixed : {false, true}) {
      const Layout layout = vectorized_layout(p, fixed);
      const Tiles& t = layout.t;
      const KTileAccesses acc = rung_accesses(layout, kShape);
      double requests = 0, wavefronts = 0;
      int worst_a = 0;
      for (const auto& [a, width] : acc.sts) {
        requests += 1;
        wavefronts += shared_wavefronts(a, width);
        if (width == eb) worst_a = std::max(worst_a, conflict_degree_per_phase(a, eb));
      }
      EXPECT_EQ(worst_a, fixed ? 1 : t.bk * eb / 16) << what;
      const std::string name = representative(fixed ? "conflict_free" : "vectorized", p).name();
      const CounterValues c = measure(name, p, kShape);
      expect_count(c.at("smem_st_requests"), requests * block_k_tiles(t, kShape), name + what);
      expect_count(c.at("smem_st_wavefronts"), wavefronts * block_k_tiles(t, kShape), name + what);
    }
  }
}

TEST(CountersLadder, SharedLoadWavefrontsMatchTheLayouts) {
  GEMM_REQUIRE_COUNTERS();
  // LDS.128 is served by quarter-warps, two conflict-free quarter-warps sharing a wavefront
  // (access_model.h). Rung 3's B reads (a thread's TN / V chunks are adjacent, so neighbours are
  // TN * eb bytes apart) reuse bank groups within a quarter-warp; rung 4's swizzle and rung 5's
  // warp-tiled mapping (neighbours read neighbouring chunks) leave every read conflict-free.
  for (Precision p : {Precision::fp32, Precision::fp64}) {
    const std::string what = std::string(" ") + to_string(p);
    struct Case {
      std::string name;
      Layout layout;
      bool conflict_free;
    };
    const std::vector<Case> cases = {
        {representative("vectorized", p).name(), vectorized_layout(p, false), false},
        {representative("conflict_free", p).name(), vectorized_layout(p, true), true},
        {representative("warptile", p).name(), warptile_layout(p), true}};
    for (const Case& k : cases) {
      const KTileAccesses acc = rung_accesses(k.layout, kShape);
      double wavefronts = 0;
      int worst = 0;
      for (const Access& a : acc.lds) {
        wavefronts += shared_wavefronts(a, 16);
        for (int q = 0; q < 4; ++q)  // conflict degree per quarter-warp
          worst = std::max(worst, bank_conflict_degree(Access(a.begin() + 8 * q, a.begin() + 8 * q + 8), 16));
      }
      if (k.conflict_free) {
        EXPECT_EQ(worst, 1) << k.name << what;
      } else {
        EXPECT_GT(worst, 1) << k.name << what;
      }
      const CounterValues c = measure(k.name, p, kShape);
      expect_count(c.at("smem_ld_wavefronts"), wavefronts * block_k_tiles(k.layout.t, kShape),
                   k.name + what + " smem_ld_wavefronts");
    }
  }
}

}  // namespace
}  // namespace gemm::test
