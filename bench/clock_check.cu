// clock-check: how the SM clock can be read, side by side, so the harness's method (NVML's
// current SM clock around every sample) is checked rather than assumed.
//   - NVML: the clock the driver set; it cannot exceed the maximum it reports.
//   - probe: clock64 cycles over %globaltimer nanoseconds of a one-thread kernel, per window;
//     the timer's granularity can inflate short windows.
//   - events: a one-thread kernel spins a fixed number of clock64 cycles, timed with CUDA events
//     (launch latency lengthens the time, so it can only read low).
// Each is read idle and right after a sustained load. With --gemm=N it runs one FP32 cuBLAS
// GEMM of N^3 while a host thread polls NVML, and prints NVML's clock during that launch: run it
// under `ncu --clock-control none --metrics sm__cycles_elapsed.avg.per_second` to compare with
// the hardware's own count on the same launch.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "nvml.h"
#include "timing.h"

namespace {

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void probe_kernel(std::uint64_t span_ns, unsigned long long* out) {
  const std::uint64_t t0 = global_timer_ns();
  const long long c0 = clock64();
  std::uint64_t t1 = t0;
  while (t1 - t0 < span_ns) t1 = global_timer_ns();
  const long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

__global__ void spin_kernel(long long cycles, int* sink) {
  const long long c0 = clock64();
  while (clock64() - c0 < cycles) {
  }
  if (threadIdx.x == 1u << 30) *sink = 1;  // never: keeps the loop
}

double probe_mhz(double span_ms, unsigned long long* dev) {
  probe_kernel<<<1, 1>>>(std::uint64_t(span_ms * 1e6), dev);
  GEMM_CHECK_LAUNCH();
  unsigned long long host[2];
  GEMM_CUDA_CHECK(cudaMemcpy(host, dev, sizeof(host), cudaMemcpyDeviceToHost));
  return 1e3 * double(host[0]) / double(host[1]);
}

double events_mhz(long long cycles, int* sink) {
  const double ms = gemm::time_single_launch_ms([&] { spin_kernel<<<1, 32>>>(cycles, sink); },
                                                nullptr);
  return double(cycles) / (ms * 1e3);
}

void print_methods(const char* when, const gemm::Nvml& nvml, unsigned long long* dev, int* sink) {
  std::printf("%s\n", when);
  if (const auto r = nvml.clock())
    std::printf("  nvml current       %7.0f MHz\n", r->sm_mhz);
  for (double ms : {0.01, 0.1, 1.0, 10.0})
    std::printf("  probe %6.2f ms     %7.0f MHz\n", ms, probe_mhz(ms, dev));
  for (long long cycles : {200000LL, 2000000LL, 20000000LL})
    std::printf("  events %9lld cyc %7.0f MHz\n", cycles, events_mhz(cycles, sink));
}

// FP32 GEMM of n^3 on uninitialized (finite, as cudaMemset 0 makes them) buffers.
struct Gemm {
  cublasHandle_t handle{};
  float *a = nullptr, *b = nullptr, *c = nullptr;
  int n;
  explicit Gemm(int n_) : n(n_) {
    const std::size_t bytes = std::size_t(n) * n * sizeof(float);
    GEMM_CUDA_CHECK(cudaMalloc(&a, bytes));
    GEMM_CUDA_CHECK(cudaMalloc(&b, bytes));
    GEMM_CUDA_CHECK(cudaMalloc(&c, bytes));
    GEMM_CUDA_CHECK(cudaMemset(a, 0, bytes));
    GEMM_CUDA_CHECK(cudaMemset(b, 0, bytes));
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate");
  }
  void run() {
    const float one = 1, zero = 0;
    if (cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n) !=
        CUBLAS_STATUS_SUCCESS)
      throw std::runtime_error("cublasSgemm");
  }
};

}  // namespace

int main(int argc, char** argv) {
  int gemm_n = 0;
  double load_s = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--gemm=", 0) == 0) {
      gemm_n = std::atoi(arg.c_str() + 7);
    } else if (arg.rfind("--load-s=", 0) == 0) {
      load_s = std::atof(arg.c_str() + 9);
    } else {
      std::fprintf(stderr, "usage: clock-check [--load-s=SECONDS] [--gemm=N]\n");
      return 2;
    }
  }
  if (gemm_n < 0 || gemm_n > 16384 || !(load_s >= 0)) {
    std::fprintf(stderr, "clock-check: --gemm takes 1..16384, --load-s a number >= 0\n");
    return 2;
  }
  try {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      std::fprintf(stderr, "clock-check: no CUDA device\n");
      return 2;
    }
    const gemm::Nvml& nvml = gemm::Nvml::for_device(0);
    if (!nvml.available()) std::printf("NVML unavailable: %s\n", nvml.why_unavailable().c_str());
    if (const auto max = nvml.max_sm_mhz()) std::printf("nvml max SM clock %.0f MHz\n", *max);
    unsigned long long* dev = nullptr;
    int* sink = nullptr;
    GEMM_CUDA_CHECK(cudaMalloc(&dev, 2 * sizeof(unsigned long long)));
    GEMM_CUDA_CHECK(cudaMalloc(&sink, sizeof(int)));
    print_methods("idle:", nvml, dev, sink);

    Gemm gemm(gemm_n > 0 ? gemm_n : 4096);
    const auto begin = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() < load_s) {
      for (int i = 0; i < 10; ++i) gemm.run();
      GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    }
    print_methods("right after the load (FP32 cuBLAS GEMMs back to back):", nvml, dev, sink);

    if (gemm_n > 0) {
      // One GEMM, NVML polled while it runs: compare with ncu's count on this launch.
      std::atomic<bool> running{true};
      std::vector<double> readings;
      std::thread poller([&] {
        while (running) {
          if (const auto r = nvml.clock()) readings.push_back(r->sm_mhz);
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      });
      gemm.run();
      GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      running = false;
      poller.join();
      std::printf("one GEMM %d^3: NVML median %.0f MHz over %zu readings\n", gemm_n,
                  gemm::median(readings), readings.size());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "clock-check: %s\n", e.what());
    return 1;
  }
}
