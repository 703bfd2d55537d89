// Inputs, output and reference of one (precision, shape): allocated once and shared by every
// variant at that shape (Google Benchmark calls a benchmark function many times).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "gemm_types.h"
#include "variant.h"

namespace gemm {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locks host memory that already exists (cudaHostRegister) for as long as it lives, so
// copies from it go straight to the DMA engines instead of through the driver's staging buffer.
class HostRegistration {
 public:
  HostRegistration() = default;
  HostRegistration(void* ptr, std::size_t bytes);
  ~HostRegistration();
  HostRegistration(HostRegistration&& other) noexcept;
  HostRegistration& operator=(HostRegistration&& other) noexcept;
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

 private:
  void* ptr_ = nullptr;
};

struct Workspace {
  Precision precision;
  GemmShape shape;
  std::uint64_t seed = 0;
  bool on_device = false;
  bool pin_host = false;  // page-lock the host buffers once they exist (--host-memory=pinned)
  // On the host: made with the workspace. With a GPU the inputs are made on the device, and the
  // host buffers exist only once host_buffers_for() made them (CPU variants, end-to-end copies):
  // most runs never need them, and copying gigabytes back would cost what the GPU saved.
  std::vector<unsigned char> host_a, host_b, host_c;
  DeviceBuffer dev_a, dev_b, dev_c;
  // The host buffers page-locked (pin_host), released before the buffers are.
  std::vector<HostRegistration> pinned;
  std::vector<double> reference;  // empty until first needed
  DeviceBuffer dev_reference;     // with a GPU: the reference where it is computed
  // The variants' device scratch at this shape (Operands::workspace): grown to the largest a
  // variant asked for, zeroed whenever a variant other than the last one takes it.
  DeviceBuffer scratch;
  const void* scratch_owner = nullptr;

  std::size_t bytes_a() const { return std::size_t(shape.m * shape.k) * element_size(precision); }
  std::size_t bytes_b() const { return std::size_t(shape.k * shape.n) * element_size(precision); }
  std::size_t bytes_c() const { return std::size_t(shape.m * shape.n) * element_size(precision); }
  std::size_t elements_c() const { return std::size_t(shape.m * shape.n); }
};

// The workspace for (p, shape), reused while the shape stays the same (one per precision); a new
// shape frees the others first. Inputs are random in [-1, 1) from seed_base mixed with the shape
// and precision (fill_random), so a workspace made again holds the same inputs, on the host or
// the device alike. `pinned_host`: page-lock the host buffers (on a device only).
Workspace& workspace_for(Precision p, const GemmShape& shape, std::uint64_t seed_base,
                         bool on_device, bool pinned_host = false);

// The host buffers of a device workspace, made on first use: A and B copied back from the
// device (the same values the host would generate), C allocated. A host workspace has them.
void host_buffers_for(Workspace& ws);

// Operands of `v` on this workspace: the host buffers for a CPU variant, the device buffers
// otherwise, with the device scratch the variant needs at this shape (allocated here, never in a
// timed launch; zeroed on `stream` when another variant used it last: the contract of
// Operands::workspace).
Operands operands_for(Workspace& ws, const Variant& v, cudaStream_t stream);

// Reference of C in higher precision, on the host: the device's copied back (with a GPU), or the
// host's own loop (without one).
const std::vector<double>& reference_for(Workspace& ws, cudaStream_t stream);

// The reference in device memory (a workspace on the device only): the double-double device
// kernel, computed once per workspace; GPU variants are verified against it where it lies.
const double* device_reference_for(Workspace& ws, cudaStream_t stream);

}  // namespace gemm
