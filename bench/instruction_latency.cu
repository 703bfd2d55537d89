// Dependent latencies of the pipes the ladder's loops use, and the integer ALU pipe's issue rate,
// in SM cycles (clock64):
//
//   pipe        chain (each instruction reads the previous one's result)      SASS
//   fma         fma.rn.f32 acc, acc, x, y                                     FFMA
//   alu         lop3.b32 v, v, y[u], z[u], 0xE8 (bitwise majority; 8 pairs    LOP3.LUT
//               y, z in turn, so that no two links cancel or fold)
//   fp64        fma.rn.f64 acc, acc, x, y                                     DFMA
//   hmma_tf32   mma.sync m16n8k8 TF32, the accumulator carried                HMMA.1688.F32.TF32
//   dmma_884    mma.sync m8n8k4 FP64, the accumulator carried                 DMMA.8x8x4
//   dmma_16816  mma.sync m16n8k16 FP64, the accumulator carried               DMMA.16x8x16
//               (compute capability 9.0 and later, where the code was built for it)
//
// One warp alone on the GPU runs 64 of them per loop iteration; the loop's own counter and branch
// do not depend on the chain, so they issue in its shadow. The ALU rate: 2 blocks of 512 threads
// per SM, 8 independent LOP3 chains per thread, the slowest block's cycles. Each measurement is
// the best of 3 launches after a warm-up.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cuda_check.h"
#include "instruction_latency.h"
#include "workspace.h"
#include "tensor/tensor_ptx.cuh"

namespace gemm::bench {
namespace {

enum class Pipe { fma, alu, fp64, hmma_tf32, dmma_884, dmma_16816 };

constexpr int kChain = 64;  // dependent instructions per loop iteration
constexpr int kIterations = 1000;
constexpr int kAluChains = 8, kAluThreads = 512, kAluBlocksPerSm = 2, kAluIterations = 2000;

__device__ __forceinline__ void ffma(float& acc, float x, float y) {
  asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(acc) : "f"(x), "f"(y));
}
__device__ __forceinline__ void dfma(double& acc, double x, double y) {
  asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(acc) : "d"(x), "d"(y));
}
// Majority, not XOR: ptxas folds a chain of identical XORs (x ^ y ^ z ^ y ^ z = x) however
// volatile the asm, and a chain of a function of v alone would fold into one instruction too.
__device__ __forceinline__ void lop3(std::uint32_t& v, std::uint32_t y, std::uint32_t z) {
  asm volatile("lop3.b32 %0, %0, %1, %2, 0xE8;" : "+r"(v) : "r"(y), "r"(z));
}

struct AluOperands {
  std::uint32_t y[8], z[8];
  __device__ explicit AluOperands(float seed) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      y[i] = __float_as_uint(seed) * (2 * i + 3) + threadIdx.x;
      z[i] = y[i] ^ (0x9e3779b9u >> i);
    }
  }
};

// The chain of pipe P, `iterations` x kChain long; returns a value that depends on all of it.
template <Pipe P>
__device__ float chain(int iterations, float seed) {
  namespace t = gemm::tensor;
  if constexpr (P == Pipe::fma) {
    float acc = seed + threadIdx.x;
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < kChain; ++u) ffma(acc, seed, 0.5f);
    return acc;
  } else if constexpr (P == Pipe::alu) {
    std::uint32_t v = threadIdx.x;
    const AluOperands o(seed);
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < kChain; ++u) lop3(v, o.y[u % 8], o.z[u % 8]);
    return __uint_as_float(v);  // any bits: float(v), an integer, could never match the sink's test
  } else if constexpr (P == Pipe::fp64) {
    double acc = seed + threadIdx.x;
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < kChain; ++u) dfma(acc, double(seed), 0.5);
    return float(acc);
  } else if constexpr (P == Pipe::hmma_tf32) {
    float c[4] = {seed, 0, 0, float(threadIdx.x)};
    const std::uint32_t a[4] = {__float_as_uint(seed), __float_as_uint(seed + 1), __float_as_uint(seed + 2),
                                __float_as_uint(seed + 3)};
    const std::uint32_t b[2] = {__float_as_uint(seed * 2), __float_as_uint(seed * 3)};
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < kChain; ++u) t::mma_tf32_16x8x8(c, a, b);
    return c[0] + c[1] + c[2] + c[3];
  } else if constexpr (P == Pipe::dmma_884) {
    double c[2] = {seed, double(threadIdx.x)};
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < kChain; ++u) t::mma_f64_8x8x4(c, double(seed), 0.5);
    return float(c[0] + c[1]);
  } else {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    double c[4] = {seed, 0, 0, double(threadIdx.x)}, a[8], b[4];
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = seed + i;
#pragma unroll
    for (int i = 0; i < 4; ++i) b[i] = seed * i;
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < kChain; ++u) t::mma_f64_16x8x16(c, a, b);
    return float(c[0] + c[1] + c[2] + c[3]);
#else
    return seed;  // m16n8k16 FP64 is sm_90 code: built for less, the chain is empty (the host skips it)
#endif
  }
}

template <Pipe P>
__global__ void dependent_chain(int iterations, float seed, float* sink, unsigned long long* cycles) {
  const long long c0 = clock64();
  const float result = chain<P>(iterations, seed);
  const long long c1 = clock64();
  if (result == 12345.678f) *sink = result;  // never true; keeps the chain
  if (threadIdx.x == 0) *cycles = static_cast<unsigned long long>(c1 - c0);
}

__global__ void __launch_bounds__(kAluThreads, kAluBlocksPerSm)
    alu_throughput(int iterations, float seed, float* sink, unsigned long long* cycles) {
  std::uint32_t v[kAluChains];
#pragma unroll
  for (int j = 0; j < kAluChains; ++j) v[j] = threadIdx.x + j;
  const AluOperands o(seed);
  __syncthreads();
  const long long c0 = clock64();
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
      for (int j = 0; j < kAluChains; ++j) lop3(v[j], o.y[u], o.z[u]);
  __syncthreads();
  const long long c1 = clock64();
  std::uint32_t all = 0;
#pragma unroll
  for (int j = 0; j < kAluChains; ++j) all ^= v[j];
  if (all == 0x9e3779b9u) sink[blockIdx.x] = float(all);  // never in practice; keeps the chains
  if (threadIdx.x == 0) cycles[blockIdx.x] = static_cast<unsigned long long>(c1 - c0);
}

// The fewest cycles per chained instruction of 3 launches (after a warm-up) of one warp.
template <Pipe P>
double chain_cycles() {
  const DeviceBuffer sink(sizeof(float)), cycles(sizeof(unsigned long long));  // freed on a throw too
  unsigned long long best = 0;
  for (int r = 0; r < 4; ++r) {
    dependent_chain<P><<<1, 32>>>(r == 0 ? kIterations / 10 : kIterations, 1.0f, static_cast<float*>(sink.get()),
                                  static_cast<unsigned long long*>(cycles.get()));
    GEMM_CHECK_LAUNCH();
    unsigned long long host = 0;
    GEMM_CUDA_CHECK(cudaMemcpy(&host, cycles.get(), sizeof(host), cudaMemcpyDeviceToHost));
    if (r > 0 && (best == 0 || host < best)) best = host;
  }
  return double(best) / (double(kIterations) * kChain);
}

}  // namespace

std::vector<InstructionLatency> measure_instruction_latencies(const DeviceInfo& device) {
  const char* method = "one warp, chains of 64 dependent instructions, 1000 iterations, clock64";
  std::vector<InstructionLatency> out = {
      {"fma", "FFMA", method, chain_cycles<Pipe::fma>()},
      {"alu", "LOP3.LUT", method, chain_cycles<Pipe::alu>()},
      {"fp64", "DFMA", method, chain_cycles<Pipe::fp64>()},
      {"hmma_tf32", "HMMA.1688.F32.TF32", method, chain_cycles<Pipe::hmma_tf32>()},
      {"dmma_884", "DMMA.8x8x4", method, chain_cycles<Pipe::dmma_884>()},
  };
  // m16n8k16 FP64 exists from compute capability 9.0: measured only where the GPU has it and the
  // chain was built for it (code built for an older target runs an empty chain on any GPU).
  cudaFuncAttributes built{};
  GEMM_CUDA_CHECK(cudaFuncGetAttributes(&built, dependent_chain<Pipe::dmma_16816>));
  if (device.cc_major >= 9 && built.ptxVersion >= 90)
    out.push_back({"dmma_16816", "DMMA.16x8x16", method, chain_cycles<Pipe::dmma_16816>()});
  return out;
}

IssueRate measure_alu_rate(const DeviceInfo& device) {
  const int blocks = device.sm_count * kAluBlocksPerSm;
  int resident = 0;
  GEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, alu_throughput, kAluThreads, 0));
  if (resident < kAluBlocksPerSm) throw std::runtime_error("the ALU rate's two 512-thread blocks do not fit an SM");
  const DeviceBuffer sink(sizeof(float) * blocks), cycles(sizeof(unsigned long long) * blocks);
  std::vector<unsigned long long> host(blocks);
  unsigned long long best = 0;
  for (int r = 0; r < 4; ++r) {
    alu_throughput<<<blocks, kAluThreads>>>(r == 0 ? kAluIterations / 10 : kAluIterations, 1.0f,
                                            static_cast<float*>(sink.get()),
                                            static_cast<unsigned long long*>(cycles.get()));
    GEMM_CHECK_LAUNCH();
    GEMM_CUDA_CHECK(cudaMemcpy(host.data(), cycles.get(), sizeof(unsigned long long) * blocks, cudaMemcpyDeviceToHost));
    const unsigned long long slowest = *std::max_element(host.begin(), host.end());
    if (r > 0 && (best == 0 || slowest < best)) best = slowest;
  }
  const double warps_per_sm = double(kAluBlocksPerSm) * kAluThreads / 32;
  const double insts = warps_per_sm * double(kAluIterations) * 8 * kAluChains;
  return {"alu", "LOP3.LUT", int(warps_per_sm), insts / double(best)};
}

}  // namespace gemm::bench
