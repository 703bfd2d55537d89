#include <algorithm>
#include <limits>
#include <sstream>

#include "variant.h"

namespace gemm {
namespace {

constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max();

std::string dims(const Dim3& d) {
  std::ostringstream s;
  s << d.x << "x" << d.y;
  if (d.z != 1) s << "x" << d.z;
  return s.str();
}

}  // namespace

std::optional<std::string> check_shape(const GemmShape& s) {
  if (s.m < 1 || s.n < 1 || s.k < 1)
    return std::string("M, N and K must be >= 1 (got ") + s.to_string() + ")";
  // Kernels index with 32-bit ints, like the write-ups they reproduce.
  // (Divided, not multiplied: a product of two dimensions of 2^32 would wrap around int64.)
  const auto over = [](std::int64_t a, std::int64_t b) { return a > kMaxIndex / b; };
  if (over(s.m, s.k) || over(s.k, s.n) || over(s.m, s.n))
    return std::string("shape ") + s.to_string() + " has a matrix with more than 2^31-1 elements";
  return std::nullopt;
}

std::optional<std::string> check_fits_memory(const GemmShape& s, Precision p,
                                             std::size_t free_bytes) {
  const double elements = double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n;
  // A, B, C in the working precision plus the FP64 reference of C.
  const double needed = elements * double(element_size(p)) + double(s.m) * s.n * 8.0;
  if (needed > double(free_bytes)) {
    std::ostringstream msg;
    msg << "shape " << s.to_string() << " in " << to_string(p) << " needs "
        << needed / (1 << 20) << " MiB of device memory, " << free_bytes / (1 << 20)
        << " MiB free";
    return msg.str();
  }
  return std::nullopt;
}

std::optional<std::string> check_fits_memory(const GemmShape& s,
                                             const std::vector<Precision>& precisions,
                                             std::size_t free_bytes) {
  if (precisions.size() == 1) return check_fits_memory(s, precisions[0], free_bytes);
  const double elements = double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n;
  // gemm-bench keeps the A, B and C of every precision of a shape allocated together, each with
  // its FP64 reference of C on the device (kept while the shape's workspace lives).
  double needed = 0;
  std::string names;
  for (Precision p : precisions) {
    needed += elements * double(element_size(p)) + double(s.m) * s.n * 8.0;
    names += std::string(names.empty() ? "" : "+") + to_string(p);
  }
  if (needed > double(free_bytes)) {
    std::ostringstream msg;
    msg << "shape " << s.to_string() << " in " << names << " needs " << needed / (1 << 20)
        << " MiB of device memory (both precisions' buffers are kept together), "
        << free_bytes / (1 << 20) << " MiB free";
    return msg.str();
  }
  return std::nullopt;
}

std::optional<std::string> check_launch(const Variant& v, const GemmShape& shape,
                                        const DeviceLimits& limits) {
  if (auto bad = check_shape(shape)) return v.name() + ": " + *bad;
  if (v.can_implement)
    if (auto refused = v.can_implement(shape, limits)) return v.name() + ": " + *refused;
  if (v.backend != Backend::cuda_kernel) return std::nullopt;

  const LaunchPlan p = v.plan(shape);
  const std::int64_t threads = p.block.count();
  std::ostringstream why;
  if (threads > limits.max_threads_per_block) {
    why << v.name() << ": " << dims(p.block) << " = " << threads
        << " threads per block > the device's " << limits.max_threads_per_block;
    return why.str();
  }
  const std::int64_t block[3] = {p.block.x, p.block.y, p.block.z};
  const std::int64_t grid[3] = {p.grid.x, p.grid.y, p.grid.z};
  const char axis[3] = {'x', 'y', 'z'};
  for (int i = 0; i < 3; ++i) {
    if (block[i] < 1 || block[i] > limits.max_block_dim[i]) {
      why << v.name() << ": block " << axis[i] << " = " << block[i] << " outside 1.."
          << limits.max_block_dim[i];
      return why.str();
    }
    if (grid[i] < 1 || grid[i] > limits.max_grid_dim[i]) {
      why << v.name() << ": grid " << axis[i] << " = " << grid[i] << " outside 1.."
          << limits.max_grid_dim[i] << " for shape " << shape.to_string();
      return why.str();
    }
  }
  // Static shared memory is capped at 48 KB by the compiler; dynamic shared memory can go up
  // to the opt-in limit, which the launch helper raises for the kernel.
  const std::size_t smem = p.static_smem_bytes + p.dynamic_smem_bytes;
  const std::size_t limit = std::max(limits.max_smem_per_block, limits.max_smem_per_block_optin);
  if (smem > limit) {
    why << v.name() << ": " << smem << " bytes of shared memory per block > the device's "
        << limit << " (opt-in limit)";
    return why.str();
  }
  return std::nullopt;
}

}  // namespace gemm
