// Host side of the TMA rungs: tensor maps of row-major FP32 matrices for cp.async.bulk.tensor,
// encoded through the runtime's driver entry point (nothing links libcuda: binaries must start,
// and say "no GPU", on machines without a driver) and cached per (box, pointers, shape).
#pragma once

#include <cuda.h>

namespace gemm::tensor {

struct TmaMapPair {
  CUtensorMap a;  // A (M x K): boxes of bm rows x bk columns
  CUtensorMap b;  // B (K x N): boxes of bk rows x 32 columns
};

// The maps for one launch: A (M x K) with rows lda floats apart, B (K x N) with rows ldb floats
// apart (lda, ldb: multiples of 4, TMA's 16-byte strides; elements past K and N read as zeros).
// Throws std::runtime_error when the driver refuses the encoding.
const TmaMapPair& tma_maps_for(int bm, int bk, const float* A, int lda, const float* B, int ldb,
                               int M, int N, int K);

}  // namespace gemm::tensor
