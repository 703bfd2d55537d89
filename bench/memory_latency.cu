// Idle latencies, in SM cycles (clock64): a chain of dependent loads, one thread, so that no two
// loads overlap and each waits the whole round trip.
//
//   level    what is chased                                               load
//   shared   a ring of 1024 words in shared memory, stride 33 words      ld.shared (LDS)
//   l1       a random ring of 128-byte lines over 16 KiB, timed on the    ld.global.ca (cached in
//            second pass (the first brought them into L1)                  L1, as the write-ups'
//                                                                          plain loads)
//   l2       a random ring of 128-byte lines over 8 MiB, timed on the     ld.global.cg (L1 bypassed,
//            second pass over the same 20,000 lines (the first brought     as the ladder's cp.async.cg)
//            them into L2)
//   dram     a random ring of 128-byte lines over 1 GiB, one pass after   ld.global.cg
//            256 MiB were written over L2 (a random page per hop: the
//            TLB's misses are in it too)
//   barrier  256 threads, 1000 __syncthreads in a row                     bar.sync
//
// And the L2's read bandwidth for the whole chip: 4 blocks of 512 threads per SM, each thread
// reading 16-byte words of a 16 MiB buffer (in L2 after the warm-up launch) with ld.global.cg,
// 32 passes, summed so that no load is dropped; bytes over the kernel's time (CUDA events).
//
// The rings are random so that no prefetch or DRAM page locality shortens a hop; each is a single
// cycle through every line, so a chase of any length never repeats a short loop.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "cuda_check.h"
#include "event_timing.h"
#include "memory_latency.h"
#include "workspace.h"

namespace gemm::bench {
namespace {

constexpr int kLineWords = 32;  // 128-byte lines of 4-byte indices
constexpr int kHops = 20000;
constexpr int kSharedWords = 1024;
constexpr int kBarrierThreads = 256;
constexpr int kBarriers = 1000;
constexpr std::size_t kFlushBytes = std::size_t(256) << 20;  // 5x the H100's L2

// Every pass starts at the ring's head, so a second pass walks the lines the first one brought in.
// through_l1: ld.global.ca (kept in L1), else ld.global.cg (L1 bypassed: L2 or DRAM each hop).
template <bool through_l1>
__global__ void chase_global(const std::uint32_t* ring, int hops, int passes, std::uint32_t* sink,
                             unsigned long long* cycles) {
  std::uint32_t p = 0;
  long long c0 = 0;
  for (int pass = 0; pass < passes; ++pass) {
    p = 0;
    c0 = clock64();  // the last pass is the one timed
    for (int i = 0; i < hops; ++i) p = through_l1 ? __ldca(ring + p) : __ldcg(ring + p);
  }
  const long long c1 = clock64();
  *sink = p;  // the chain's end: keeps every load
  *cycles = static_cast<unsigned long long>(c1 - c0);
}

__global__ void chase_shared(int hops, std::uint32_t* sink, unsigned long long* cycles) {
  __shared__ std::uint32_t ring[kSharedWords];
  if (threadIdx.x == 0) {
    for (int i = 0; i < kSharedWords; ++i) ring[i] = (i + 33) % kSharedWords;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  volatile std::uint32_t* r = ring;  // one LDS per hop, none hoisted
  std::uint32_t p = 0;
  const long long c0 = clock64();
  for (int i = 0; i < hops; ++i) p = r[p];
  const long long c1 = clock64();
  *sink = p;
  *cycles = static_cast<unsigned long long>(c1 - c0);
}

__global__ void barrier_loop(int barriers, unsigned long long* cycles) {
  __syncthreads();
  const long long c0 = clock64();
  for (int i = 0; i < barriers; ++i) __syncthreads();
  const long long c1 = clock64();
  if (threadIdx.x == 0) *cycles = static_cast<unsigned long long>(c1 - c0);
}

__global__ void stream_l2(const uint4* buffer, std::size_t words, int passes, unsigned* sink) {
  uint4 sum = {0, 0, 0, 0};
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (int p = 0; p < passes; ++p)
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < words; i += stride) {
      const uint4 v = __ldcg(buffer + i);
      sum.x ^= v.x, sum.y ^= v.y, sum.z ^= v.z, sum.w ^= v.w;
    }
  if ((sum.x ^ sum.y ^ sum.z ^ sum.w) == 0x9e3779b9u) *sink = sum.x;  // never in practice: keeps the loads
}

// One random cycle through `lines` 128-byte lines: each line's first word holds the next
// line's first word's index.
std::vector<std::uint32_t> random_ring(std::size_t lines) {
  std::vector<std::uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(12345));
  std::vector<std::uint32_t> ring(lines * kLineWords, 0);
  for (std::size_t i = 0; i < lines; ++i)
    ring[std::size_t(order[i]) * kLineWords] = order[(i + 1) % lines] * kLineWords;
  return ring;
}

// passes = 2: the timed pass finds its lines in L2 (through_l1: in L1; the first pass brought them
// in); passes = 1 after L2 was flushed: each line comes from DRAM.
template <bool through_l1 = false>
double global_chase(std::size_t bytes, int passes) {
  const auto ring = random_ring(bytes / (kLineWords * sizeof(std::uint32_t)));
  const DeviceBuffer d_ring(ring.size() * sizeof(std::uint32_t)), sink(sizeof(std::uint32_t)),
      cycles(sizeof(unsigned long long));  // freed on a throw too
  GEMM_CUDA_CHECK(cudaMemcpy(d_ring.get(), ring.data(), d_ring.bytes(), cudaMemcpyHostToDevice));
  if (passes == 1) {  // the copy's last lines may sit in L2: overwrite L2 with another buffer
    const DeviceBuffer flush(kFlushBytes);
    GEMM_CUDA_CHECK(cudaMemset(flush.get(), 0, kFlushBytes));
    GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  chase_global<through_l1><<<1, 1>>>(static_cast<const std::uint32_t*>(d_ring.get()), kHops, passes,
                         static_cast<std::uint32_t*>(sink.get()), static_cast<unsigned long long*>(cycles.get()));
  GEMM_CHECK_LAUNCH();
  unsigned long long host = 0;
  GEMM_CUDA_CHECK(cudaMemcpy(&host, cycles.get(), sizeof(host), cudaMemcpyDeviceToHost));
  return double(host) / kHops;
}

double shared_chase() {
  const DeviceBuffer sink(sizeof(std::uint32_t)), cycles(sizeof(unsigned long long));
  chase_shared<<<1, 32>>>(kHops, static_cast<std::uint32_t*>(sink.get()), static_cast<unsigned long long*>(cycles.get()));
  GEMM_CHECK_LAUNCH();
  unsigned long long host = 0;
  GEMM_CUDA_CHECK(cudaMemcpy(&host, cycles.get(), sizeof(host), cudaMemcpyDeviceToHost));
  return double(host) / kHops;
}

double barrier_cycles() {
  const DeviceBuffer cycles(sizeof(unsigned long long));
  barrier_loop<<<1, kBarrierThreads>>>(kBarriers, static_cast<unsigned long long*>(cycles.get()));
  GEMM_CHECK_LAUNCH();
  unsigned long long host = 0;
  GEMM_CUDA_CHECK(cudaMemcpy(&host, cycles.get(), sizeof(host), cudaMemcpyDeviceToHost));
  return double(host) / kBarriers;
}

constexpr std::size_t kStreamBytes = std::size_t(16) << 20;
constexpr int kStreamPasses = 32;
constexpr int kStreamThreads = 512, kStreamBlocksPerSm = 4;

}  // namespace

Bandwidth measure_l2_read_bandwidth(const DeviceInfo& device) {
  if (device.l2_bytes > 0 && kStreamBytes * 2 > std::size_t(device.l2_bytes))
    throw std::runtime_error("the L2 stream (16 MiB) is not well inside this GPU's L2");
  const DeviceBuffer buffer_memory(kStreamBytes), sink_memory(sizeof(unsigned));  // freed on a throw too
  const auto* buffer = static_cast<const uint4*>(buffer_memory.get());
  auto* sink = static_cast<unsigned*>(sink_memory.get());
  GEMM_CUDA_CHECK(cudaMemset(buffer_memory.get(), 1, kStreamBytes));
  const std::size_t words = kStreamBytes / sizeof(uint4);
  const int blocks = device.sm_count * kStreamBlocksPerSm;
  stream_l2<<<blocks, kStreamThreads>>>(buffer, words, 2, sink);  // warm-up: the buffer into L2
  GEMM_CHECK_LAUNCH();
  const float best_ms = best_event_ms(5, [&] {
    stream_l2<<<blocks, kStreamThreads>>>(buffer, words, kStreamPasses, sink);
    GEMM_CHECK_LAUNCH();
  });
  const double bytes = double(kStreamBytes) * kStreamPasses;
  return {"l2_read", "every SM, 16-byte ld.global.cg over 16 MiB in L2, 32 passes, kernel time (events)",
          bytes / (best_ms * 1e6)};
}

std::vector<Latency> measure_latencies(const DeviceInfo& device) {
  constexpr std::size_t kL1Ring = std::size_t(16) << 10, kL2Ring = std::size_t(8) << 20,
                        kDramRing = std::size_t(1) << 30;
  if (device.l2_bytes > 0 && kL2Ring * 2 > std::size_t(device.l2_bytes))
    throw std::runtime_error("the L2 ring (8 MiB) is not well inside this GPU's L2");
  if (device.total_memory < kDramRing * 2) throw std::runtime_error("the DRAM ring (1 GiB) does not fit twice");
  return {
      {"shared", "pointer chase, one thread, 1024-word ring in shared memory", shared_chase()},
      {"l1", "pointer chase, one thread, random 128-byte lines over 16 KiB, ld.global.ca, second pass",
       global_chase<true>(kL1Ring, 2)},
      {"l2", "pointer chase, one thread, random 128-byte lines over 8 MiB, ld.global.cg", global_chase(kL2Ring, 2)},
      {"dram", "pointer chase, one thread, random 128-byte lines over 1 GiB, ld.global.cg", global_chase(kDramRing, 1)},
      {"barrier", "__syncthreads of 256 threads, 1000 in a row", barrier_cycles()},
  };
}

}  // namespace gemm::bench
