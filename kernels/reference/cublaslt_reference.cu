// cuBLASLt references, autotuned per shape: the heuristic's top algorithms for the shape are
// each timed and the fastest kept, which is what a framework's autotuner picks (cublasGemmEx
// takes the heuristic's first choice untimed); within 2% of the fastest, the heuristic's order
// decides, so that timing noise does not change the choice from one process to the next. Row-major C = A * B as the column-major
// C^T = B^T * A^T, like cublas_reference.cu.
//   cublaslt        FP32 (CUBLAS_COMPUTE_32F) and FP64 (CUBLAS_COMPUTE_64F)
//   cublaslt_tf32   FP32 storage, CUBLAS_COMPUTE_32F_FAST_TF32
// The choice is made on the variant's first run for a shape (the harness's verification, never a
// timed launch) and kept; `choice` reports it with the results. The algorithms may use a
// workspace, allocated once for the process, like the library's own handle.
#include <cublasLt.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <tuple>
#include <vector>

#include "launch.cuh"

#define GEMM_CUBLASLT_CHECK(call) GEMM_LIBRARY_CHECK("cuBLASLt", CUBLAS_STATUS_SUCCESS, call)

namespace gemm {
namespace {

constexpr int kCandidates = 8;                     // heuristic results timed per shape
constexpr std::size_t kWorkspaceBytes = 32u << 20;  // what the candidates may use
constexpr int kRounds = 7;          // launches of each candidate, interleaved
constexpr float kClockUpMs = 20;     // launches before the rounds, to leave the idle clock
constexpr float kTieBand = 0.02f;    // within 2% of the fastest: a tie, the heuristic's order wins

cublasLtHandle_t handle() {
  static std::once_flag once;
  static cublasLtHandle_t h = nullptr;
  std::call_once(once, [] { GEMM_CUBLASLT_CHECK(cublasLtCreate(&h)); });
  return h;
}

void* workspace() {
  static std::once_flag once;
  static void* p = nullptr;
  std::call_once(once, [] { GEMM_CUDA_CHECK(cudaMalloc(&p, kWorkspaceBytes)); });
  return p;
}

// The descriptors of one problem; destroyed with it.
struct Problem {
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t a{}, b{}, c{};
  cudaDataType_t type;
  Problem(const GemmShape& s, cudaDataType_t t, cublasComputeType_t compute) : type(t) {
    const cudaDataType_t scale = t == CUDA_R_64F ? CUDA_R_64F : CUDA_R_32F;
    GEMM_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&op, compute, scale));
    // Column-major C^T (n x m) = B^T (n x k) * A^T (k x m), no transposes.
    GEMM_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&a, t, s.n, s.k, s.n));
    GEMM_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&b, t, s.k, s.m, s.k));
    GEMM_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&c, t, s.n, s.m, s.n));
  }
  ~Problem() {
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(op);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  void run(const cublasLtMatmulAlgo_t& algo, const Operands& ops, cudaStream_t stream) const {
    const double alpha64 = 1.0, beta64 = 0.0;
    const float alpha32 = 1.0f, beta32 = 0.0f;
    const bool fp64 = type == CUDA_R_64F;
    const void* alpha = fp64 ? static_cast<const void*>(&alpha64) : &alpha32;
    const void* beta = fp64 ? static_cast<const void*>(&beta64) : &beta32;
    GEMM_CUBLASLT_CHECK(cublasLtMatmul(handle(), op, alpha, ops.b, a, ops.a, b, beta, ops.c, c,
                                       ops.c, c, &algo, workspace(), kWorkspaceBytes, stream));
  }
};

struct Choice {
  std::shared_ptr<Problem> problem;
  cublasLtMatmulAlgo_t algo{};
  std::string description;  // JSON object
};

int algo_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  int value = 0;
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof(value), &written) !=
      CUBLAS_STATUS_SUCCESS)
    return -1;
  return value;
}

// Times the candidates in rounds, one launch of each per round, and returns each one's median:
// a clock that is still rising, or that a power cap pulls down, moves every candidate alike
// instead of favouring whichever was timed last. A short burst first takes the clock out of
// idle.
std::vector<float> median_ms(const std::vector<std::function<void()>>& launches, cudaStream_t stream) {
  cudaEvent_t start, stop;
  GEMM_CUDA_CHECK(cudaEventCreate(&start));
  GEMM_CUDA_CHECK(cudaEventCreate(&stop));
  const auto timed = [&](const std::function<void()>& launch) {
    GEMM_CUDA_CHECK(cudaEventRecord(start, stream));
    launch();
    GEMM_CUDA_CHECK(cudaEventRecord(stop, stream));
    GEMM_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    GEMM_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    return t;
  };
  for (float busy = 0; busy < kClockUpMs;) busy += timed(launches.front());
  std::vector<std::vector<float>> ms(launches.size());
  for (int round = 0; round < kRounds; ++round)
    for (std::size_t i = 0; i < launches.size(); ++i) ms[i].push_back(timed(launches[i]));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::vector<float> medians;
  for (auto& m : ms) {
    std::nth_element(m.begin(), m.begin() + m.size() / 2, m.end());
    medians.push_back(m[m.size() / 2]);
  }
  return medians;
}

// Times the heuristic's candidates on the caller's buffers (C is overwritten, A and B read).
// Candidates within kTieBand of the fastest are ties, and a tie goes to the heuristic's order:
// two processes then pick the same algorithm unless one is clearly faster.
Choice autotune(const GemmShape& s, cudaDataType_t type, cublasComputeType_t compute,
                const Operands& ops, cudaStream_t stream) {
  Choice best;
  best.problem = std::make_shared<Problem>(s, type, compute);
  cublasLtMatmulPreference_t pref{};
  GEMM_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::size_t ws = kWorkspaceBytes;
  GEMM_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int returned = 0;
  const Problem& p = *best.problem;
  const cublasStatus_t found = cublasLtMatmulAlgoGetHeuristic(
      handle(), p.op, p.a, p.b, p.c, p.c, pref, kCandidates, results, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  GEMM_CUBLASLT_CHECK(found);
  if (returned == 0)
    throw std::runtime_error("cuBLASLt: the heuristic has no algorithm for " + s.to_string());
  std::vector<int> ranks;
  std::vector<std::function<void()>> launches;
  for (int i = 0; i < returned; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    auto launch = [&p, &ops, stream, algo = results[i].algo] { p.run(algo, ops, stream); };
    launch();  // a failure surfaces here, outside the timing
    ranks.push_back(i);
    launches.push_back(launch);
  }
  if (ranks.empty()) throw std::runtime_error("cuBLASLt: no candidate algorithm ran");
  const std::vector<float> ms = median_ms(launches, stream);
  const float fastest = *std::min_element(ms.begin(), ms.end());
  std::size_t pick = 0;
  while (ms[pick] > fastest * (1 + kTieBand)) ++pick;  // the first in rank order within the band
  const int best_index = ranks[pick];
  const int timed = int(ranks.size());
  best.algo = results[best_index].algo;
  std::ostringstream d;
  d << "{\"library\": \"cuBLASLt\", \"candidates_timed\": " << timed
    << ", \"heuristic_rank\": " << best_index << ", \"median_ms\": " << ms[pick]
    << ", \"fastest_ms\": " << fastest << ", \"tie_band\": " << kTieBand
    << ", \"algo_id\": " << algo_attribute(best.algo, CUBLASLT_ALGO_CONFIG_ID)
    << ", \"tile_id\": " << algo_attribute(best.algo, CUBLASLT_ALGO_CONFIG_TILE_ID)
    << ", \"stages_id\": " << algo_attribute(best.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID)
    << ", \"split_k\": " << algo_attribute(best.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)
    << ", \"reduction_scheme\": "
    << algo_attribute(best.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)
    << ", \"cta_swizzling\": " << algo_attribute(best.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)
    << ", \"workspace_bytes\": " << results[best_index].workspaceSize << "}";
  best.description = d.str();
  return best;
}

using Key = std::tuple<int, int, std::int64_t, std::int64_t, std::int64_t>;

struct Choices {
  std::mutex lock;
  std::map<Key, Choice> by_problem;
};
Choices& choices() {
  static Choices c;
  return c;
}

Key key_of(cudaDataType_t type, cublasComputeType_t compute, const GemmShape& s) {
  return {int(type), int(compute), s.m, s.n, s.k};
}

VariantBuilder cublaslt_variant(std::string family, Precision p, cublasComputeType_t compute,
                                Compute arithmetic) {
  const cudaDataType_t type = p == Precision::fp32 ? CUDA_R_32F : CUDA_R_64F;
  VariantBuilder b(std::move(family), p);
  b.compute(arithmetic)
      .runs_on(Backend::cublas,
               [type, compute](const Operands& ops, cudaStream_t stream) {
                 Choices& all = choices();
                 std::unique_lock<std::mutex> guard(all.lock);
                 const Key key = key_of(type, compute, ops.shape);
                 auto it = all.by_problem.find(key);
                 if (it == all.by_problem.end())
                   it = all.by_problem.emplace(key, autotune(ops.shape, type, compute, ops, stream))
                            .first;
                 const Choice choice = it->second;
                 guard.unlock();
                 choice.problem->run(choice.algo, ops, stream);
               })
      .choice([type, compute](const GemmShape& s) -> std::string {
        Choices& all = choices();
        std::lock_guard<std::mutex> guard(all.lock);
        const auto it = all.by_problem.find(key_of(type, compute, s));
        return it == all.by_problem.end() ? "" : it->second.description;
      })
      .tags({tag::summary});
  return b;
}

}  // namespace

void add_cublaslt_reference_variants(std::vector<Variant>& out) {
  out.push_back(cublaslt_variant("cublaslt", Precision::fp32, CUBLAS_COMPUTE_32F, Compute::fp32)
                    .origin("reference: cuBLASLt, CUBLAS_COMPUTE_32F, fastest of the heuristic's "
                            "top algorithms for the shape")
                    .build());
  out.push_back(cublaslt_variant("cublaslt", Precision::fp64, CUBLAS_COMPUTE_64F, Compute::fp64)
                    .origin("reference: cuBLASLt, CUBLAS_COMPUTE_64F, fastest of the heuristic's "
                            "top algorithms for the shape")
                    .build());
  out.push_back(cublaslt_variant("cublaslt_tf32", Precision::fp32, CUBLAS_COMPUTE_32F_FAST_TF32,
                                 Compute::tf32)
                    .origin("reference: cuBLASLt, CUBLAS_COMPUTE_32F_FAST_TF32, fastest of the "
                            "heuristic's top algorithms for the shape")
                    .note("TF32 tensor cores: not comparable in accuracy with FP32")
                    .build());
}

}  // namespace gemm
