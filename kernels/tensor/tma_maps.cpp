#include "tma_maps.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "cuda_check.h"

namespace gemm::tensor {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void* symbol = nullptr;
    cudaDriverEntryPointQueryResult found{};
    GEMM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &symbol, 12000,
                                                     cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || symbol == nullptr)
      throw std::runtime_error("cuTensorMapEncodeTiled not found in the CUDA driver");
    return reinterpret_cast<EncodeTiled>(symbol);
  }();
  return fn;
}

// A row-major rows x cols FP32 matrix with rows ld floats apart, boxes of box_rows x box_cols,
// 128-byte swizzle (box_cols * 4 must be <= 128), zeros outside the matrix.
CUtensorMap encode_2d(const float* base, int rows, int cols, int ld, int box_rows, int box_cols) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(ld) * sizeof(float)};
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides, box,
      elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) +
                             ") for a " + std::to_string(rows) + " x " + std::to_string(cols) +
                             " matrix");
  return map;
}

}  // namespace

// Encoding is host-only and cheap (no driver round trip, a few hundred nanoseconds), but it is
// per launch; the cache keeps a timed loop to launches only.
const TmaMapPair& tma_maps_for(int bm, int bk, const float* A, int lda, const float* B, int ldb,
                               int M, int N, int K) {
  using Key = std::tuple<int, int, const float*, int, const float*, int, int, int, int>;
  static std::mutex mutex;
  static std::map<Key, TmaMapPair> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const Key key{bm, bk, A, lda, B, ldb, M, N, K};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() > 256) cache.clear();  // bounded: a sweep touches few (pointer, shape) pairs
  TmaMapPair maps{encode_2d(A, M, K, lda, bm, bk), encode_2d(B, K, N, ldb, bk, 32)};
  return cache.emplace(key, maps).first->second;
}

}  // namespace gemm::tensor
