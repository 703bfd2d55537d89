// pipe-peaks: the throughput of each instruction form the ladder's rungs compute with, per SM
// per SM clock, measured with nothing around it (no global memory, no barriers, no tails). The
// bottleneck account reads it (pipe_peaks.json beside the study) to turn instruction counts into
// time at peak: the tensor pipe's busy cycles do not say how much work a cycle did, and on Hopper
// an HMMA (mma.sync) keeps the pipe busy for a different amount of work than an HGMMA (wgmma).
//
//   form          instruction (SASS)            work per warp instruction      warps per SM
//   ffma          FFMA                          32 FMAs = 64 FLOP              32 (2 blocks of 512)
//   dfma          DFMA                          64 FLOP                        32
//   hmma_tf32     HMMA.1688.F32.TF32 (m16n8k8)  16*8*8 FMAs = 2048 FLOP        32
//   dmma_884      DMMA.8x8x4 (m8n8k4)             8*8*4 FMAs = 512 FLOP          32
//   dmma_16816    DMMA.16x8x16 (m16n8k16)         16*8*16 FMAs = 4096 FLOP       16 (its registers)
//   gmma_tf32     HGMMA.64x256x8.F32.TF32       64*256*8 FMAs per warpgroup,   8 (2 warpgroups)
//                 (wgmma, B from shared memory)  a quarter per warp: 65536 FLOP
//   gmma_tf32_n128  HGMMA.64x128x8.F32.TF32     half of that: 32768 FLOP       8
//
// Each warp runs independent chains (8 accumulators for the FMAs, 4 MMAs in flight) so that
// latency is hidden and the pipe, not the dependency, sets the rate. Cycles: clock64 around each
// block's loop, the slowest block of the grid (every SM holds the same blocks), so the rate is
// independent of the clock the GPU ran at; the clock itself (cycles over %globaltimer) and the
// GFLOP/s from CUDA events are printed beside it. Timed: kernel only, the best of 5 launches
// after a warm-up. Beside the forms, the idle latencies of shared memory, L2, DRAM and a barrier
// and the L2's read bandwidth (bench/memory_latency.cu), which the account charges a k-tile whose
// loads are not overlapped; and each pipe's dependent latency and the integer ALU pipe's rate
// (bench/instruction_latency.cu), which the account's simulation of a k-tile's schedule needs.
//
// Usage: pipe-peaks [--json=FILE]. Exit status: 0, 1 on a CUDA error, 2 on bad usage or no GPU
// (or one that is not compute capability 9.0: wgmma is sm_90a code).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.h"
#include "device_info.h"
#include "event_timing.h"
#include "instruction_latency.h"
#include "memory_latency.h"
#include "tensor/sm90a_ptx.cuh"
#include "workspace.h"

namespace {

namespace t = gemm::tensor;

enum class Form { ffma, dfma, hmma_tf32, dmma_884, dmma_16816, gmma_tf32_n128, gmma_tf32 };

struct FormInfo {
  const char* key;
  const char* sass;
  double flop_per_warp_inst;
  int threads;         // per block
  int blocks_per_sm;   // resident at once
  int unrolled;        // warp instructions of the form per thread per loop iteration
};

constexpr FormInfo info(Form f) {
  switch (f) {
    case Form::ffma: return {"ffma", "FFMA", 64, 512, 2, 64};
    case Form::dfma: return {"dfma", "DFMA", 64, 512, 2, 64};
    case Form::hmma_tf32: return {"hmma_tf32", "HMMA.1688.F32.TF32", 2048, 512, 2, 16};
    case Form::dmma_884: return {"dmma_884", "DMMA.8x8x4", 512, 512, 2, 16};
    case Form::dmma_16816: return {"dmma_16816", "DMMA.16x8x16", 4096, 512, 1, 16};
    case Form::gmma_tf32_n128: return {"gmma_tf32_n128", "HGMMA.64x128x8.F32.TF32", 32768, 256, 1, 8};
    case Form::gmma_tf32: return {"gmma_tf32", "HGMMA.64x256x8.F32.TF32", 65536, 256, 1, 8};
  }
  return {"", "", 0, 0, 0, 0};
}

constexpr int kBSmemBytes = 256 * 128;  // wgmma's B: 256 rows of 32 TF32 (128-byte swizzle)

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// The form's loop: `iterations` times info(F).unrolled instructions per thread, independent
// chains; `seed` keeps the operands unknown to the compiler, `sink` keeps the results live.
template <Form F>
__device__ float form_loop(int iterations, float seed) {
  if constexpr (F == Form::ffma || F == Form::dfma) {
    using T = std::conditional_t<F == Form::ffma, float, double>;
    T acc[8], x = T(seed), y = T(seed * 0.5f);
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = T(threadIdx.x + j);
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < 8; ++u)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[j] = fma(acc[j], x, y);
    T sum = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += acc[j];
    return float(sum);
  } else if constexpr (F == Form::hmma_tf32) {
    float c[4][4] = {};
    const std::uint32_t a[4] = {__float_as_uint(seed), __float_as_uint(seed + 1), __float_as_uint(seed + 2),
                                __float_as_uint(seed + threadIdx.x)};
    const std::uint32_t b[2] = {__float_as_uint(seed * 2), __float_as_uint(seed * 3)};
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int j = 0; j < 4; ++j) t::mma_tf32_16x8x8(c[j], a, b);
    return c[0][0] + c[1][1] + c[2][2] + c[3][3];
  } else if constexpr (F == Form::dmma_884) {
    double c[4][2] = {};
    const double a = seed, b = seed + threadIdx.x;
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int j = 0; j < 4; ++j) t::mma_f64_8x8x4(c[j], a, b);
    return float(c[0][0] + c[1][1] + c[2][0] + c[3][1]);
  } else if constexpr (F == Form::dmma_16816) {
    double c[4][4] = {}, a[8], b[4];
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = seed + i;
#pragma unroll
    for (int i = 0; i < 4; ++i) b[i] = seed * i + threadIdx.x;
    for (int it = 0; it < iterations; ++it)
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int j = 0; j < 4; ++j) t::mma_f64_16x8x16(c[j], a, b);
    return float(c[0][0] + c[1][1] + c[2][2] + c[3][3]);
  } else {
    constexpr int N = F == Form::gmma_tf32 ? 256 : 128;
    // One warpgroup's chain of m64n256k8 wgmmas on one accumulator, four per commit group (a
    // k-tile of 32), one group in flight while the next is issued, each group after a fence
    // (as CUTLASS's mainloops keep them).
    extern __shared__ __align__(1024) unsigned char b_tile[];
    for (int i = threadIdx.x; i < kBSmemBytes / 4; i += blockDim.x)
      reinterpret_cast<float*>(b_tile)[i] = seed + 1e-3f * (i % 97);
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // generic writes -> wgmma reads
    const std::uint32_t b_addr = gemm::smem_addr(b_tile);
    float d[N / 2] = {};
    const std::uint32_t a[4] = {__float_as_uint(seed), __float_as_uint(seed + 1), __float_as_uint(seed + 2),
                                __float_as_uint(seed + threadIdx.x % 32)};
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        t::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) t::wgmma_tf32_rs<N>(d, a, t::desc_k_major_sw128(b_addr + 32 * kk));
        t::wgmma_commit();
        t::wgmma_wait<1>();
      }
    }
    t::wgmma_wait<0>();
    float sum = 0;
#pragma unroll
    for (int i = 0; i < N / 2; i += 17) sum += d[i];
    return sum;
  }
}

template <Form F>
__global__ void __launch_bounds__(info(F).threads, info(F).blocks_per_sm) pipe_loop(int iterations, float seed, float* sink,
                                                             unsigned long long* cycles,
                                                             unsigned long long* timer_ns) {
  __syncthreads();
  const long long c0 = clock64();
  const std::uint64_t t0 = global_timer_ns();
  const float result = form_loop<F>(iterations, seed);
  __syncthreads();
  const long long c1 = clock64();
  const std::uint64_t t1 = global_timer_ns();
  if (result == 12345.678f) sink[blockIdx.x] = result;  // never true; keeps the loop
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = static_cast<unsigned long long>(c1 - c0);
    timer_ns[blockIdx.x] = t1 - t0;
  }
}

struct Measured {
  FormInfo form;
  int warps_per_sm = 0;
  double flop_per_clk_per_sm = 0, inst_per_clk_per_sm = 0, clock_mhz = 0, gflops = 0;
};

template <Form F>
Measured measure(const gemm::DeviceInfo& device, int iterations) {
  constexpr FormInfo form = info(F);
  const int smem = F == Form::gmma_tf32 || F == Form::gmma_tf32_n128 ? kBSmemBytes + 1024 : 0;
  int resident = 0;
  GEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, pipe_loop<F>, form.threads, smem));
  if (resident < form.blocks_per_sm)
    throw std::runtime_error(std::string(form.key) + ": " + std::to_string(resident) + " blocks of " +
                             std::to_string(form.threads) + " threads fit an SM, " +
                             std::to_string(form.blocks_per_sm) + " needed");
  const int blocks = device.sm_count * form.blocks_per_sm;
  // Freed however the measurement ends (a failed check throws).
  const gemm::DeviceBuffer sink_memory(sizeof(float) * blocks), cycles_memory(sizeof(unsigned long long) * blocks),
      timer_memory(sizeof(unsigned long long) * blocks);
  auto* sink = static_cast<float*>(sink_memory.get());
  auto* cycles = static_cast<unsigned long long*>(cycles_memory.get());
  auto* timer = static_cast<unsigned long long*>(timer_memory.get());
  auto launch = [&](int n) {
    pipe_loop<F><<<blocks, form.threads, smem>>>(n, 1.0f, sink, cycles, timer);
    GEMM_CHECK_LAUNCH();
  };
  launch(std::max(1, iterations / 10));  // warm-up
  GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> best_cycles(blocks), best_timer(blocks);
  const float best_ms = gemm::bench::best_event_ms(5, [&] { launch(iterations); }, [&] {
    GEMM_CUDA_CHECK(cudaMemcpy(best_cycles.data(), cycles, sizeof(unsigned long long) * blocks,
                               cudaMemcpyDeviceToHost));
    GEMM_CUDA_CHECK(cudaMemcpy(best_timer.data(), timer, sizeof(unsigned long long) * blocks,
                               cudaMemcpyDeviceToHost));
  });
  const auto slowest = std::max_element(best_cycles.begin(), best_cycles.end()) - best_cycles.begin();
  const double warps = double(blocks) * form.threads / 32;
  // Per-warp instruction count: the gmma form issues its instruction once per warpgroup, which
  // the counters (smsp__inst_executed_pipe_tensor_op_gmma) count once per warp, as here.
  const double warp_insts = warps * double(iterations) * form.unrolled;
  const double flop = warp_insts * form.flop_per_warp_inst;
  Measured m;
  m.form = form;
  m.warps_per_sm = form.blocks_per_sm * form.threads / 32;
  m.flop_per_clk_per_sm = flop / device.sm_count / double(best_cycles[slowest]);
  m.inst_per_clk_per_sm = m.flop_per_clk_per_sm / form.flop_per_warp_inst;
  m.clock_mhz = best_timer[slowest] ? 1e3 * double(best_cycles[slowest]) / double(best_timer[slowest]) : 0;
  m.gflops = flop / (best_ms * 1e6);
  return m;
}

struct Dependencies {
  std::vector<gemm::bench::InstructionLatency> latencies;
  gemm::bench::IssueRate alu;
};

std::string json(const gemm::DeviceInfo& device, const std::vector<Measured>& rows,
                 const std::vector<gemm::bench::Latency>& latencies, const gemm::bench::Bandwidth& l2,
                 const Dependencies& deps) {
  std::string out = "{\n  \"gpu_name\": \"" + device.name + "\",\n  \"sm_count\": " +
                    std::to_string(device.sm_count) + ",\n  \"forms\": [\n";
  char line[512];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Measured& m = rows[i];
    std::snprintf(line, sizeof(line),
                  "    {\"form\": \"%s\", \"sass\": \"%s\", \"flop_per_warp_inst\": %.0f, \"warps_per_sm\": %d, "
                  "\"flop_per_clk_per_sm\": %.2f, \"inst_per_clk_per_sm\": %.5f, \"clock_mhz\": %.0f, "
                  "\"gflops\": %.0f}%s\n",
                  m.form.key, m.form.sass, m.form.flop_per_warp_inst, m.warps_per_sm, m.flop_per_clk_per_sm,
                  m.inst_per_clk_per_sm, m.clock_mhz, m.gflops, i + 1 < rows.size() ? "," : "");
    out += line;
  }
  out += "  ],\n  \"latencies\": [\n";
  for (std::size_t i = 0; i < latencies.size(); ++i) {
    const auto& l = latencies[i];
    std::snprintf(line, sizeof(line), "    {\"level\": \"%s\", \"cycles\": %.1f, \"method\": \"%s\"}%s\n",
                  l.level.c_str(), l.cycles, l.method.c_str(), i + 1 < latencies.size() ? "," : "");
    out += line;
  }
  std::snprintf(line, sizeof(line),
                "  ],\n  \"bandwidths\": [\n    {\"level\": \"%s\", \"gbs\": %.0f, \"method\": \"%s\"}\n  ],\n",
                l2.level.c_str(), l2.gbs, l2.method.c_str());
  out += line;
  out += "  \"instruction_latencies\": [\n";
  for (std::size_t i = 0; i < deps.latencies.size(); ++i) {
    const auto& l = deps.latencies[i];
    std::snprintf(line, sizeof(line), "    {\"pipe\": \"%s\", \"sass\": \"%s\", \"cycles\": %.2f, \"method\": \"%s\"}%s\n",
                  l.pipe.c_str(), l.sass.c_str(), l.cycles, l.method.c_str(), i + 1 < deps.latencies.size() ? "," : "");
    out += line;
  }
  std::snprintf(line, sizeof(line),
                "  ],\n  \"issue_rates\": [\n    {\"pipe\": \"%s\", \"sass\": \"%s\", \"warps_per_sm\": %d, "
                "\"inst_per_clk_per_sm\": %.5f}\n  ]\n}\n",
                deps.alu.pipe.c_str(), deps.alu.sass.c_str(), deps.alu.warps_per_sm, deps.alu.inst_per_clk_per_sm);
  return out + line;
}

int run(const std::string& json_path) {
  // The JSON goes to a temporary file beside it, renamed into place once written: a path it
  // cannot write is refused before anything is measured (and before the device is asked, so
  // the refusal is the same with a GPU or without), and a failed run leaves an existing file
  // as it was.
  const std::string temporary = json_path + ".tmp";
  FILE* out = nullptr;
  if (!json_path.empty() && !(out = std::fopen(temporary.c_str(), "w"))) {
    std::fprintf(stderr, "pipe-peaks: cannot write %s\n", json_path.c_str());
    return 2;
  }
  const auto finish = [&](int status) {
    if (out) {
      std::fclose(out);
      std::remove(temporary.c_str());
    }
    return status;
  };
  std::string why;
  const auto device = gemm::query_device(0, why);
  if (!device) {
    std::fprintf(stderr, "pipe-peaks: %s\n", why.c_str());
    return finish(2);
  }
  if (device->cc_major != 9 || device->cc_minor != 0) {
    std::fprintf(stderr, "pipe-peaks: %s is compute capability %d.%d; its forms (wgmma) are sm_90a code\n",
                 device->name.c_str(), device->cc_major, device->cc_minor);
    return finish(2);
  }
  std::vector<Measured> rows;
  std::vector<gemm::bench::Latency> latencies;
  gemm::bench::Bandwidth l2;
  Dependencies deps;
  try {
    rows = {
        measure<Form::ffma>(*device, 4000),      measure<Form::dfma>(*device, 1000),
        measure<Form::hmma_tf32>(*device, 2000), measure<Form::dmma_884>(*device, 1000),
        measure<Form::dmma_16816>(*device, 300), measure<Form::gmma_tf32_n128>(*device, 4000),
        measure<Form::gmma_tf32>(*device, 2000),
    };
    latencies = gemm::bench::measure_latencies(*device);
    l2 = gemm::bench::measure_l2_read_bandwidth(*device);
    deps = {gemm::bench::measure_instruction_latencies(*device), gemm::bench::measure_alu_rate(*device)};
  } catch (...) {
    finish(1);
    throw;
  }
  std::printf("%s, %d SMs; kernel only, CUDA events, best of 5; rates per SM per SM clock (clock64)\n",
              device->name.c_str(), device->sm_count);
  std::printf("%-14s %-24s %12s %8s %14s %14s %9s %10s\n", "form", "SASS", "FLOP/inst", "warps/SM",
              "FLOP/clk/SM", "inst/clk/SM", "SM MHz", "GFLOP/s");
  for (const auto& m : rows)
    std::printf("%-14s %-24s %12.0f %8d %14.1f %14.4f %9.0f %10.0f\n", m.form.key, m.form.sass,
                m.form.flop_per_warp_inst, m.warps_per_sm, m.flop_per_clk_per_sm, m.inst_per_clk_per_sm,
                m.clock_mhz, m.gflops);
  std::printf("\nidle latencies, SM cycles (clock64):\n");
  for (const auto& l : latencies) std::printf("%-8s %8.1f  %s\n", l.level.c_str(), l.cycles, l.method.c_str());
  std::printf("\n%s: %.0f GB/s (%s)\n", l2.level.c_str(), l2.gbs, l2.method.c_str());
  std::printf("\ndependent latencies, SM cycles (clock64):\n");
  for (const auto& l : deps.latencies)
    std::printf("%-11s %-20s %7.2f  %s\n", l.pipe.c_str(), l.sass.c_str(), l.cycles, l.method.c_str());
  std::printf("\n%s pipe (%s): %.3f warp instructions/clk/SM at %d warps per SM\n", deps.alu.pipe.c_str(),
              deps.alu.sass.c_str(), deps.alu.inst_per_clk_per_sm, deps.alu.warps_per_sm);
  if (out) {
    const std::string text = json(*device, rows, latencies, l2, deps);
    const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
    const bool closed = std::fclose(out) == 0;
    out = nullptr;
    if (!closed || !written || std::rename(temporary.c_str(), json_path.c_str()) != 0) {
      std::fprintf(stderr, "pipe-peaks: writing %s failed\n", json_path.c_str());
      std::remove(temporary.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--json=", 7) == 0 && argv[i][7] != '\0') {
      json_path = argv[i] + 7;
    } else {
      std::fprintf(stderr, "usage: pipe-peaks [--json=FILE]\n");
      return 2;
    }
  }
  try {
    return run(json_path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipe-peaks: %s\n", e.what());
    return 1;
  }
}
