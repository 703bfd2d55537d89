#include "gpu_test_support.h"

#include <iostream>
#include <memory>
#include <random>
#include <utility>

#include "cuda_check.h"

namespace gemm::test {

const std::optional<std::string>& no_gpu_reason() {
  static const std::optional<std::string> reason = []() -> std::optional<std::string> {
    std::string why;
    if (!query_device(0, why)) return why;
    return std::nullopt;
  }();
  return reason;
}

const DeviceInfo& device() {
  static const DeviceInfo info = [] {
    std::string why;
    auto d = query_device(0, why);
    if (!d) throw std::runtime_error(why);
    return *d;
  }();
  return info;
}

cudaStream_t test_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }();
  return stream;
}

TestData& test_data(Precision p, const GemmShape& s) {
  static std::map<std::string, std::unique_ptr<TestData>> cache;
  static const std::uint64_t seed = [] {
    const std::uint64_t value = std::random_device{}();
    std::cout << "[ gemm     ] random inputs from seed " << value << "\n";
    return value;
  }();
  const std::string key = to_string(p) + s.to_string();
  auto& slot = cache[key];
  if (slot) return *slot;
  auto d = std::make_unique<TestData>();
  d->precision = p;
  d->shape = s;
  const std::size_t es = element_size(p);
  d->a.resize(std::size_t(s.m * s.k) * es);
  d->b.resize(std::size_t(s.k * s.n) * es);
  fill_random(p, d->a.data(), std::size_t(s.m * s.k), seed + cache.size() * 2);
  fill_random(p, d->b.data(), std::size_t(s.k * s.n), seed + cache.size() * 2 + 1);
  d->dev_a = DeviceBuffer(d->a.size());
  d->dev_b = DeviceBuffer(d->b.size());
  d->dev_c = DeviceBuffer(std::size_t(s.m * s.n) * es);
  GEMM_CUDA_CHECK(cudaMemcpy(d->dev_a.get(), d->a.data(), d->a.size(), cudaMemcpyHostToDevice));
  GEMM_CUDA_CHECK(cudaMemcpy(d->dev_b.get(), d->b.data(), d->b.size(), cudaMemcpyHostToDevice));
  slot = std::move(d);
  return *slot;
}

const std::vector<double>& TestData::ref() {
  if (reference.empty()) reference = cpu_reference_gemm(precision, a.data(), b.data(), shape);
  return reference;
}

const Variant& find_variant(const std::string& name, Precision p) {
  for (const auto& v : all_variants())
    if (v.name() == name && v.precision == p) return v;
  throw std::runtime_error("no variant " + name + " in " + to_string(p));
}

const Variant& representative(const std::string& family, Precision p) {
  for (const auto& v : all_variants())
    if (v.family == family && v.precision == p && v.role == Role::representative) return v;
  throw std::runtime_error("no representative of " + family + " in " + to_string(p));
}

std::int64_t param(const Variant& v, const std::string& key, std::int64_t otherwise) {
  for (const Param& f : v.param_fields)
    if (f.key == key) return f.value;
  return otherwise;
}

Verification verify_device_output(const Variant& v, TestData& data) {
  std::vector<unsigned char> c(data.dev_c.bytes());
  GEMM_CUDA_CHECK(cudaMemcpy(c.data(), data.dev_c.get(), c.size(), cudaMemcpyDeviceToHost));
  return verify(v.precision, c.data(), data.ref(),
                verification_tolerance(v.unit_roundoff, data.shape.k));
}

Operands operands_for(const Variant& v, TestData& data) {
  static DeviceBuffer scratch;
  // The variant and the data (one per precision and shape, kept for the process) it was last
  // handed over for. The same variant at another shape counts as another owner: its tile counters
  // lie where the previous shape's partial tiles were left (a run leaves only its counters at
  // zero), and would start from those values.
  static std::pair<const Variant*, const TestData*> owner{nullptr, nullptr};
  Operands ops{data.dev_a.get(), data.dev_b.get(), data.dev_c.get(), data.shape};
  const std::size_t bytes = v.workspace_bytes(data.shape);
  if (bytes == 0) return ops;
  if (scratch.bytes() < bytes) {
    scratch = DeviceBuffer();
    scratch = DeviceBuffer(bytes);
    owner = {nullptr, nullptr};
  }
  if (owner != std::make_pair(&v, static_cast<const TestData*>(&data))) {
    GEMM_CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0, scratch.bytes(), test_stream()));
    owner = {&v, &data};
  }
  ops.workspace = scratch.get();
  ops.workspace_bytes = scratch.bytes();
  return ops;
}

Verification run_and_verify(const Variant& v, TestData& data) {
  // NaN poison, on the stream the variant runs on: test_stream() does not wait for the legacy
  // default stream, so a plain cudaMemset could land after (or during) the kernel.
  GEMM_CUDA_CHECK(cudaMemsetAsync(data.dev_c.get(), 0xFF, data.dev_c.bytes(), test_stream()));
  v.run(operands_for(v, data), test_stream());
  GEMM_CUDA_CHECK(cudaStreamSynchronize(test_stream()));
  return verify_device_output(v, data);
}

}  // namespace gemm::test
