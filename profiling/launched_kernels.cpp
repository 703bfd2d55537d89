#include "launched_kernels.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>

namespace gemm {
namespace {

constexpr std::size_t kBufferBytes = 1 << 20;
constexpr std::size_t kAlignment = 8;  // CUPTI's required buffer alignment

std::mutex records_lock;
std::vector<std::string>* records = nullptr;  // the collection in progress

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid_bytes) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    std::lock_guard<std::mutex> guard(records_lock);
    if (records && kernel->name) records->push_back(kernel->name);
  }
  std::free(buffer);
}

void check(CUptiResult status, const char* call) {
  if (status == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(status, &text);
  throw std::runtime_error(std::string(call) + ": " + (text ? text : "unknown CUPTI error"));
}

}  // namespace

std::vector<std::string> launched_kernels(const std::function<void()>& launch) {
  static const bool registered = [] {
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed),
          "cuptiActivityRegisterCallbacks");
    return true;
  }();
  (void)registered;
  std::vector<std::string> names;
  auto collect_into = [](std::vector<std::string>* target) {
    std::lock_guard<std::mutex> guard(records_lock);
    records = target;
  };
  collect_into(&names);
  std::string failure;
  try {
    check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
    launch();
    if (cudaDeviceSynchronize() != cudaSuccess)
      failure = std::string("launch failed: ") + cudaGetErrorString(cudaGetLastError());
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Stop collecting whatever happened, and deliver what was recorded.
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const CUptiResult flushed = cuptiActivityFlushAll(1);
  collect_into(nullptr);
  if (!failure.empty()) throw std::runtime_error(failure);
  check(flushed, "cuptiActivityFlushAll");
  return names;
}

}  // namespace gemm
