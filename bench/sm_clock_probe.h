// The SM clock as the hardware counts it over a sample: each SM's clock64 cycles over
// %globaltimer nanoseconds between a stamp taken right before the sample's start event and one
// right after its stop event.
//
// Why beside NVML. NVML reports the clock the driver set on the SM clock domain. On an H100 the
// SMs count fewer cycles per second than that under TF32 tensor-core load: in one study, with
// NVML at 1920 to 1980 MHz, the SMs counted 1443 to 1879 MHz on those benchmarks at 4096^3 (ncu's
// sm__cycles_elapsed.avg.per_second 1497 to 1891 on their profiled launches, pipe-peaks' clock64
// over %globaltimer 1815 on the TF32 MMA forms), while the project's other kernels counted within
// 2% of NVML. Cycles from NVML's clock (the account's units at peak, "in SM cycles" comparisons)
// are then off by up to a quarter; this count is not. Where nothing slows the SMs the count sits
// about 0.8% above NVML's maximum (so does ncu's): compare counts with counts, NVML with NVML.
//
// Each stamp is one 32-thread block per slot of a grid of twice the SMs (blocks go to idle SMs
// first); an SM counts when both stamps reached it; the chip has one SM clock domain (NVML's
// NVML_CLOCK_SM), so the median over those that did is the chip's clock, busy SMs or idle. The
// window holds the sample's launches and two short gaps, so it needs to be long against the
// timer's granularity: a window under kMinWindowNs gives no reading, and a run's count needs a
// reading on half its samples (timing.h).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace gemm {

struct SmStamp {
  std::uint32_t sm = 0;      // %smid
  std::uint64_t cycles = 0;  // clock64 on that SM
  std::uint64_t ns = 0;      // %globaltimer
};

// Windows shorter than this give no reading (%globaltimer may tick in microseconds).
inline constexpr std::uint64_t kMinWindowNs = 100'000;

// The median over the SMs stamped in both lists of cycles over nanoseconds, in MHz; 0 where no
// SM was stamped in both or every window is shorter than kMinWindowNs.
double clock_between_mhz(const std::vector<SmStamp>& before, const std::vector<SmStamp>& after);

class SmClockProbe {
 public:
  explicit SmClockProbe(int sm_count);
  ~SmClockProbe();
  SmClockProbe(const SmClockProbe&) = delete;
  SmClockProbe& operator=(const SmClockProbe&) = delete;

  void stamp_before(cudaStream_t stream) { stamp(stream, 0); }
  void stamp_after(cudaStream_t stream) { stamp(stream, 1); }
  // Waits for the stream, then the clock between the two stamps (0: no reading).
  double read_mhz(cudaStream_t stream);

 private:
  void stamp(cudaStream_t stream, int which);
  int slots_ = 0;
  SmStamp* device_ = nullptr;  // 2 x slots_
};

}  // namespace gemm
