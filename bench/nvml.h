// The GPU's clock and power as the driver reports them, through NVML loaded at run time (so the
// binary starts on machines without a driver). The clock NVML reports is the one the driver set
// on the SM clock domain: it cannot exceed the hardware maximum, unlike a cycles-over-timer probe,
// whose timer granularity can inflate a short window.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gemm {

struct ClockReading {
  double sm_mhz = 0;
  // NVML clock-event reasons (nvmlClocksEventReasons): why the clock is below its maximum.
  unsigned long long reasons = 0;
};

class Nvml {
 public:
  // The process-wide instance for the CUDA device `ordinal` (matched by PCI bus id).
  static Nvml& for_device(int ordinal);

  bool available() const { return device_ != nullptr; }
  const std::string& why_unavailable() const { return why_; }

  std::optional<ClockReading> clock() const;
  std::optional<double> max_sm_mhz() const;
  std::optional<double> power_w() const;
  std::optional<double> power_limit_w() const;

 private:
  explicit Nvml(int ordinal);
  void* device_ = nullptr;
  std::string why_;
};

// Reasons that mean "slowed down" (power cap, thermal, hardware slowdown), not idle, an
// application clock setting or the display clock.
bool is_slowdown(unsigned long long reasons);
// "sw_power_cap", "hw_thermal_slowdown", ... for each slowdown bit set.
std::vector<std::string> slowdown_names(unsigned long long reasons);

}  // namespace gemm
