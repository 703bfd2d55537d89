#include "workspace.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_check.h"
#include "reference.h"

namespace gemm {
namespace {

// The workspaces in use: one per precision of the current shape, so that a run alternating
// precisions at one shape (a tracking run with random interleaving) does not regenerate the
// inputs and recompute the reference (seconds at 1024^3 in FP64) at every switch. A new shape
// frees them all before allocating.
std::vector<std::unique_ptr<Workspace>> in_use;

}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  GEMM_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

HostRegistration::HostRegistration(void* ptr, std::size_t bytes) {
  if (ptr == nullptr || bytes == 0) return;
  if (const cudaError_t e = cudaHostRegister(ptr, bytes, cudaHostRegisterDefault); e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("cannot page-lock " + std::to_string(bytes >> 20) +
                             " MiB of host memory for the end-to-end copies (" +
                             cudaGetErrorString(e) + "): run with --host-memory=pageable");
  }
  ptr_ = ptr;
}

HostRegistration::~HostRegistration() {
  if (ptr_) cudaHostUnregister(ptr_);
}

HostRegistration::HostRegistration(HostRegistration&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)) {}

HostRegistration& HostRegistration::operator=(HostRegistration&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaHostUnregister(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
  }
  return *this;
}

Workspace& workspace_for(Precision p, const GemmShape& s, std::uint64_t seed_base,
                         bool on_device, bool pinned_host) {
  const auto same_shape = [&](const std::unique_ptr<Workspace>& w) {
    return w->shape.m == s.m && w->shape.n == s.n && w->shape.k == s.k &&
           w->on_device == on_device;
  };
  for (auto& w : in_use)
    if (same_shape(w) && w->precision == p) return *w;
  in_use.erase(std::remove_if(in_use.begin(), in_use.end(),
                              [&](const std::unique_ptr<Workspace>& w) { return !same_shape(w); }),
               in_use.end());
  auto ws = std::make_unique<Workspace>();
  ws->precision = p;
  ws->shape = s;
  ws->on_device = on_device;
  ws->pin_host = on_device && pinned_host;
  ws->seed = seed_base ^ (std::uint64_t(s.m) * 0x9E3779B97F4A7C15ull) ^
             (std::uint64_t(s.n) << 21) ^ (std::uint64_t(s.k) << 42) ^
             (p == Precision::fp64 ? 0x5555ull : 0ull);
  if (on_device) {
    ws->dev_a = DeviceBuffer(ws->bytes_a());
    ws->dev_b = DeviceBuffer(ws->bytes_b());
    ws->dev_c = DeviceBuffer(ws->bytes_c());
    fill_random_on_device(p, ws->dev_a.get(), std::size_t(s.m * s.k), ws->seed, nullptr);
    fill_random_on_device(p, ws->dev_b.get(), std::size_t(s.k * s.n), ws->seed + 1, nullptr);
    GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    ws->host_a.resize(ws->bytes_a());
    ws->host_b.resize(ws->bytes_b());
    ws->host_c.resize(ws->bytes_c());
    fill_random(p, ws->host_a.data(), std::size_t(s.m * s.k), ws->seed);
    fill_random(p, ws->host_b.data(), std::size_t(s.k * s.n), ws->seed + 1);
  }
  in_use.push_back(std::move(ws));
  return *in_use.back();
}


void host_buffers_for(Workspace& ws) {
  if (!ws.host_c.empty() || ws.bytes_c() == 0) return;
  ws.host_a.resize(ws.bytes_a());
  ws.host_b.resize(ws.bytes_b());
  ws.host_c.resize(ws.bytes_c());
  if (ws.on_device) {
    GEMM_CUDA_CHECK(cudaMemcpy(ws.host_a.data(), ws.dev_a.get(), ws.bytes_a(), cudaMemcpyDeviceToHost));
    GEMM_CUDA_CHECK(cudaMemcpy(ws.host_b.data(), ws.dev_b.get(), ws.bytes_b(), cudaMemcpyDeviceToHost));
  }
  if (ws.pin_host)
    for (auto* host : {&ws.host_a, &ws.host_b, &ws.host_c})
      ws.pinned.emplace_back(host->data(), host->size());
}

Operands operands_for(Workspace& ws, const Variant& v, cudaStream_t stream) {
  if (v.backend == Backend::cpu) {
    host_buffers_for(ws);
    return {ws.host_a.data(), ws.host_b.data(), ws.host_c.data(), ws.shape};
  }
  Operands ops{ws.dev_a.get(), ws.dev_b.get(), ws.dev_c.get(), ws.shape};
  const std::size_t bytes = v.workspace_bytes(ws.shape);
  if (bytes == 0) return ops;
  if (ws.scratch.bytes() < bytes) {
    ws.scratch = DeviceBuffer();  // free first: the old and the new need not fit together
    ws.scratch = DeviceBuffer(bytes);
    ws.scratch_owner = nullptr;
  }
  if (ws.scratch_owner != &v) {
    GEMM_CUDA_CHECK(cudaMemsetAsync(ws.scratch.get(), 0, ws.scratch.bytes(), stream));
    ws.scratch_owner = &v;
  }
  ops.workspace = ws.scratch.get();
  ops.workspace_bytes = ws.scratch.bytes();
  return ops;
}

const double* device_reference_for(Workspace& ws, cudaStream_t stream) {
  if (!ws.on_device) throw std::logic_error("device_reference_for: a host workspace");
  if (!ws.dev_reference.get()) {
    // Computed on the GPU at every size (double-double, checked against the host's long double
    // in the GPU tests): the host's loop took about a second at 1024^3.
    ws.dev_reference = DeviceBuffer(ws.elements_c() * sizeof(double));
    device_reference_gemm(ws.precision, ws.dev_a.get(), ws.dev_b.get(),
                          static_cast<double*>(ws.dev_reference.get()), ws.shape, stream);
    GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return static_cast<const double*>(ws.dev_reference.get());
}

const std::vector<double>& reference_for(Workspace& ws, cudaStream_t stream) {
  if (!ws.reference.empty()) return ws.reference;
  if (!ws.on_device) {
    ws.reference = cpu_reference_gemm(ws.precision, ws.host_a.data(), ws.host_b.data(), ws.shape);
    return ws.reference;
  }
  const double* ref = device_reference_for(ws, stream);
  ws.reference.resize(ws.elements_c());
  GEMM_CUDA_CHECK(cudaMemcpy(ws.reference.data(), ref, ws.elements_c() * sizeof(double),
                             cudaMemcpyDeviceToHost));
  return ws.reference;
}

}  // namespace gemm
