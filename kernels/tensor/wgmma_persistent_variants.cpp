// Registration of the wgmma_persistent family (always compiled, like wgmma_tma_variants.cpp).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "families.h"
#include "tensor_families.h"
#include "wgmma_tma.h"

namespace gemm {

int tensor::wgmma_persistent_blocks(const WgmmaPersistentConfig& c, int M, int N) {
  const int tiles = ((M + c.tile.bm - 1) / c.tile.bm) * ((N + c.tile.bn - 1) / c.tile.bn);
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();  // no device: the facts of --list show one block per tile
    return tiles;
  }
  return std::max(1, std::min(tiles, sms));
}

void add_wgmma_persistent_variants(std::vector<Variant>& out) {
  using tensor::kWgmmaPersistentConfigs;
  using tensor::WgmmaPersistentConfig;
  using tensor::WgmmaTmaConfig;
  for (int i = 0; i < tensor::kWgmmaPersistentConfigCount; ++i) {
    const WgmmaPersistentConfig c = kWgmmaPersistentConfigs[i];
    const WgmmaTmaConfig t = c.tile;
    Variant v = tensor::wgmma_variant(
        "wgmma_persistent",
        {{"bm", t.bm}, {"bn", t.bn}, {"bk", WgmmaTmaConfig::bk}, {"stages", t.stages},
         {"group", c.group}},
        c.representative);
    v.rung = kRungWgmmaPersistent;
    v.rung_name = "wgmma + TMA, persistent";
    v.origin = "the wgmma + TMA block (producer warpgroup, setmaxnreg) on a persistent grid: one "
               "block per SM, k-tile pipeline running on across tiles, grouped tile order";
    v.outputs_per_thread = double(t.bm) * t.bn / (t.consumers() * 128);
    tensor::set_wgmma_launch(
        v, t, i,
        [c](const GemmShape& s) {
          return Dim3{tensor::wgmma_persistent_blocks(c, int(s.m), int(s.n)), 1, 1};
        },
        tensor::kWgmmaPersistentEntryPoints);
    out.push_back(std::move(v));
  }
}

}  // namespace gemm
