// fp64-ceiling: how busy an 8 x 8 register-blocked inner loop keeps the FP64 pipe on this GPU,
// without any GEMM around it (no global memory, no barriers, no tails). Each thread runs the
// ladder's FP64 inner loop, acc[i][j] += a[i] * b[j] for an 8 x 8 thread tile, over and over,
// with its fragments either kept in registers or loaded from shared memory one k step ahead, as
// the ladder's kernels load them (paired lanes, compile-time offsets, double-buffered):
//   registers, row order    DFMAs alone, in the plain loop order: the pipe's reach
//   registers, zigzag       DFMAs alone, rows walked in alternating directions (the ladder's order)
//   shared, 16-byte loads   + 8 LDS.128 per 64 DFMAs (the ladder's FP64 8 x 8 inner loop)
//   shared, 8-byte loads    + 16 LDS.64 per 64 DFMAs
// The register rows bound any kernel with this tile; the shared rows are the kernels' inner loop
// with nothing else around it, what a rung built on it is read against.
// Timed: kernel only, CUDA events, the best of 5 launches after a warm-up; the SM clock is
// measured inside the kernel (clock64 against the global timer), and the percentages are of the
// FP64 FMA peak at the maximum clock and at the measured one.
//
// Usage: fp64-ceiling [--blocks-per-sm=N] (default 2 blocks of 128 threads: 8 warps per SM, as the
// tuned FP64 rung; N above what fits an SM is refused). Exit status: 0, 1 on a CUDA error, 2 on
// bad usage or no GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "cuda_check.h"
#include "device_info.h"
#include "event_timing.h"
#include "workspace.h"

namespace {

constexpr int kTile = 8, kThreads = 128, kSteps = 8;  // 8 x 8 doubles; k steps per iteration
enum class Feed { registers, lds128, lds64 };

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <Feed FEED, bool ZIGZAG>
__global__ void __launch_bounds__(kThreads) inner_loop(double* out, int iterations, double seed,
                                                       unsigned long long* clock) {
  // Two sets of kSteps rows of A and of B, 64 16-byte chunks each: the k rows of a 128-wide
  // stage. Iterations alternate between the sets, so the loads cannot be hoisted out of the loop
  // while every row offset stays a compile-time immediate, as in the ladder's kernels.
  __shared__ double2 stage[2][2 * kSteps][64];
  for (int i = threadIdx.x; i < 2 * 2 * kSteps * 64; i += blockDim.x)
    (&stage[0][0][0])[i] = make_double2(seed + i, seed - i);
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const int lane_m = (lane & 1) | (lane >> 1) / 8 * 2, lane_n = (lane >> 1) % 8;  // paired lanes
  double acc[kTile][kTile] = {}, a[2][kTile], b[2][kTile];
  for (int i = 0; i < kTile; ++i) {
    a[0][i] = a[1][i] = seed + i * threadIdx.x;
    b[0][i] = b[1][i] = seed * i + 1e-3 * threadIdx.x;
  }
  // Fragments of k step k of the set `set` into register buffer `buf`: loaded one k step ahead
  // of their use, double-buffered as in the ladder's kernels.
  auto load = [&](int buf, int set, int k) {
    if constexpr (FEED == Feed::lds128) {
#pragma unroll
      for (int c = 0; c < kTile / 2; ++c) {
        const double2 x = stage[0][set * kSteps + k][lane_m + c * 4];
        const double2 y = stage[1][set * kSteps + k][lane_n + c * 8];
        a[buf][2 * c] = x.x, a[buf][2 * c + 1] = x.y, b[buf][2 * c] = y.x, b[buf][2 * c + 1] = y.y;
      }
    } else if constexpr (FEED == Feed::lds64) {
      const double* as = &stage[0][set * kSteps + k][0].x;
      const double* bs = &stage[1][set * kSteps + k][0].x;
#pragma unroll
      for (int c = 0; c < kTile; ++c) a[buf][c] = as[lane_m + c * 4], b[buf][c] = bs[lane_n + c * 8];
    }
  };
  const long long c0 = clock64();
  const std::uint64_t t0 = global_timer_ns();
  load(0, 0, 0);
  for (int it = 0; it < iterations; ++it) {
    const int set = it & 1;
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      if (k + 1 < kSteps) {
        load((k + 1) % 2, set, k + 1);
      } else {
        load(0, set ^ 1, 0);
      }
#pragma unroll
      for (int i = 0; i < kTile; ++i)
#pragma unroll
        for (int jj = 0; jj < kTile; ++jj) {
          const int j = ZIGZAG && i % 2 ? kTile - 1 - jj : jj;
          acc[i][j] = fma(a[k % 2][i], b[k % 2][j], acc[i][j]);
        }
    }
  }
  const long long c1 = clock64();
  const std::uint64_t t1 = global_timer_ns();
  double sum = 0;  // keeps every accumulator live
  for (int i = 0; i < kTile; ++i)
    for (int j = 0; j < kTile; ++j) sum += acc[i][j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    clock[0] = static_cast<unsigned long long>(c1 - c0);
    clock[1] = t1 - t0;
  }
}

struct Row {
  double gflops, clock_mhz;
};

template <Feed FEED, bool ZIGZAG>
Row measure(int blocks, int iterations, double* out, unsigned long long* clock) {
  auto launch = [&](int n) {
    inner_loop<FEED, ZIGZAG><<<blocks, kThreads>>>(out, n, 1.0, clock);
    GEMM_CHECK_LAUNCH();
  };
  launch(iterations / 10);  // warm-up
  GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const float best_ms = gemm::bench::best_event_ms(5, [&] { launch(iterations); });
  unsigned long long host[2] = {};
  GEMM_CUDA_CHECK(cudaMemcpy(host, clock, sizeof(host), cudaMemcpyDeviceToHost));
  const double flops = 2.0 * kTile * kTile * kSteps * double(iterations) * blocks * kThreads;
  return {flops / (best_ms * 1e6), host[1] ? 1e3 * double(host[0]) / double(host[1]) : 0.0};
}

int run(int blocks_per_sm) {
  std::string why;
  const auto device = gemm::query_device(0, why);
  if (!device) {
    std::fprintf(stderr, "fp64-ceiling: %s\n", why.c_str());
    return 2;
  }
  const auto peak = gemm::peak_gflops(device->cc_major, device->cc_minor, device->sm_count,
                                      device->max_sm_clock_khz, gemm::Precision::fp64);
  int resident = 0;  // the fewest blocks per SM of the four kernels
  for (const void* k : {reinterpret_cast<const void*>(inner_loop<Feed::registers, false>),
                        reinterpret_cast<const void*>(inner_loop<Feed::registers, true>),
                        reinterpret_cast<const void*>(inner_loop<Feed::lds128, true>),
                        reinterpret_cast<const void*>(inner_loop<Feed::lds64, true>)}) {
    int n = 0;
    GEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, kThreads, 0));
    resident = resident == 0 ? n : std::min(resident, n);
  }
  if (blocks_per_sm > resident) {
    std::fprintf(stderr, "fp64-ceiling: --blocks-per-sm=%d: at most %d blocks of %d threads fit an "
                 "SM with these kernels' registers\n", blocks_per_sm, resident, kThreads);
    return 2;
  }
  const int blocks = device->sm_count * blocks_per_sm;
  const gemm::DeviceBuffer out_memory(sizeof(double) * blocks * kThreads), clock_memory(2 * sizeof(unsigned long long));
  auto* out = static_cast<double*>(out_memory.get());
  auto* clock = static_cast<unsigned long long*>(clock_memory.get());
  std::printf("%s, %d SMs, %d blocks of %d threads per SM; kernel only, CUDA events, best of 5\n",
              device->name.c_str(), device->sm_count, blocks_per_sm, kThreads);
  std::printf("%-24s %10s %10s %14s %16s\n", "8 x 8 FP64 inner loop", "GFLOP/s", "SM MHz",
              "% of peak", "% at that clock");
  auto print = [&](const char* name, Row r) {
    if (!peak) {
      std::printf("%-24s %10.0f %10.0f %14s %16s\n", name, r.gflops, r.clock_mhz, "-", "-");
      return;
    }
    const double at_clock = *peak * r.clock_mhz / (device->max_sm_clock_khz / 1e3);
    std::printf("%-24s %10.0f %10.0f %14.1f %16.1f\n", name, r.gflops, r.clock_mhz,
                100 * r.gflops / *peak, 100 * r.gflops / at_clock);
  };
  const int iterations = 20000;
  print("registers, row order", measure<Feed::registers, false>(blocks, iterations, out, clock));
  print("registers, zigzag", measure<Feed::registers, true>(blocks, iterations, out, clock));
  print("shared, 16-byte loads", measure<Feed::lds128, true>(blocks, iterations, out, clock));
  print("shared, 8-byte loads", measure<Feed::lds64, true>(blocks, iterations, out, clock));
  if (peak)
    std::printf("peak: %.0f GFLOP/s (FP64 FMA lanes x 2 x SMs x %d MHz)\n", *peak,
                device->max_sm_clock_khz / 1000);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int blocks_per_sm = 2;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (std::strncmp(arg, "--blocks-per-sm=", 16) == 0) {
      char* end = nullptr;
      const long n = std::strtol(arg + 16, &end, 10);
      if (*end != '\0' || n < 1 || n > 16) {
        std::fprintf(stderr, "fp64-ceiling: --blocks-per-sm needs an integer from 1 to 16\n");
        return 2;
      }
      blocks_per_sm = int(n);
    } else {
      std::fprintf(stderr, "usage: fp64-ceiling [--blocks-per-sm=N]\n");
      return 2;
    }
  }
  try {
    return run(blocks_per_sm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fp64-ceiling: %s\n", e.what());
    return 1;
  }
}
