#include "sm_clock_probe.h"

#include <algorithm>
#include <map>

#include "cuda_check.h"
#include "sampling.h"

namespace gemm {
namespace {

__global__ void stamp_kernel(SmStamp* out) {
  if (threadIdx.x != 0) return;
  std::uint32_t sm;
  std::uint64_t ns;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  out[blockIdx.x] = {sm, static_cast<std::uint64_t>(clock64()), ns};
}

}  // namespace

double clock_between_mhz(const std::vector<SmStamp>& before, const std::vector<SmStamp>& after) {
  // The first stamp of each SM on either side: two blocks on one SM read the same counter a few
  // cycles apart, and keeping one of them keeps each SM to one vote.
  std::map<std::uint32_t, SmStamp> first;
  for (const SmStamp& s : before) first.emplace(s.sm, s);
  std::map<std::uint32_t, bool> seen;
  std::vector<double> mhz;
  for (const SmStamp& s : after) {
    const auto b = first.find(s.sm);
    if (b == first.end() || seen[s.sm]) continue;
    seen[s.sm] = true;
    if (s.ns <= b->second.ns || s.cycles <= b->second.cycles) continue;
    const std::uint64_t ns = s.ns - b->second.ns;
    if (ns < kMinWindowNs) continue;
    mhz.push_back(1e3 * double(s.cycles - b->second.cycles) / double(ns));
  }
  return mhz.empty() ? 0.0 : median(mhz);
}

SmClockProbe::SmClockProbe(int sm_count) : slots_(2 * std::max(sm_count, 1)) {
  GEMM_CUDA_CHECK(cudaMalloc(&device_, 2 * std::size_t(slots_) * sizeof(SmStamp)));
}

SmClockProbe::~SmClockProbe() { cudaFree(device_); }

void SmClockProbe::stamp(cudaStream_t stream, int which) {
  stamp_kernel<<<slots_, 32, 0, stream>>>(device_ + std::size_t(which) * slots_);
  GEMM_CHECK_LAUNCH();
}

double SmClockProbe::read_mhz(cudaStream_t stream) {
  std::vector<SmStamp> host(2 * std::size_t(slots_));
  GEMM_CUDA_CHECK(cudaMemcpyAsync(host.data(), device_, host.size() * sizeof(SmStamp),
                                  cudaMemcpyDeviceToHost, stream));
  GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<SmStamp> before(host.begin(), host.begin() + slots_);
  const std::vector<SmStamp> after(host.begin() + slots_, host.end());
  return clock_between_mhz(before, after);
}

}  // namespace gemm
