// What the GPU's clock did around a benchmark, so two runs can be compared in cycles as well as
// in time: boost clocks drift between runs (temperature, power), and a run that throttled is
// slower for reasons no code change explains.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>

namespace gemm {

// SM clock in MHz, measured on the device: a one-thread kernel counts clock64() cycles against
// the %globaltimer nanoseconds over about 100 us. Run right after the timed launches, while the
// clocks are still where the load put them.
double measure_sm_clock_mhz(cudaStream_t stream);

// Whether the driver reports a clock-lowering reason (power cap, thermal or hardware slowdown;
// not idle or an application clock setting) for `device` now, through NVML loaded at run time
// (so the binary starts on machines without a driver); nothing when NVML is unavailable.
std::optional<bool> clock_throttled(int device);

}  // namespace gemm
