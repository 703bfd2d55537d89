// auto and auto_tf32: one variant per arithmetic that runs, for each shape, the variant a sweep
// over the shape suites found fastest there (CUTLASS's and cuBLAS's heuristics do the same job
// for their libraries). What users call; what the report and the README quote per shape.
//   auto       fp32: FP32 on the CUDA cores (against cuBLAS SGEMM); fp64: FP64, tensor cores
//              or CUDA cores (against cuBLAS DGEMM)
//   auto_tf32  fp32 storage, TF32 arithmetic or better (against cuBLAS with TF32)
// The choice for a shape, in order:
//   1. the table (auto_table.inc, written by gemm-tune-shapes from a suite sweep): the
//      variant measured fastest at exactly this shape;
//   2. on a GPU, the model (shape_model.h), then a measurement (timed_choice.h): every
//      candidate the sweep timed, at its predicted time here. A candidate's prediction is its
//      measured time at the two nearest sweep shapes of the same kind (a few rows, M <= 16; a few
//      columns, N <= 16; or neither; distance: the sum of |log ratio| of M, N and K, one more for
//      a shape whose rows of A and B have the other 16-byte alignment (shape_model.h);
//      auto_times.inc), each scaled by the work of the busiest SM here over there (its tiles,
//      waves and K split at both shapes, from its own launch plan and this GPU's SMs), averaged.
//      The first run at the shape times the kTimedCandidates fastest predictions on its own
//      operands and stream, and keeps the fastest for every later run (the earliest in the
//      model's order within 2% of it). Until then the fastest prediction stands, and the
//      workspace asked for is the largest any of them needs; a first run under CUDA graph
//      capture, or with GEMM_AUTO_TIMING=off, keeps the fastest prediction untimed (settled());
//   3. without a GPU to plan on (listing), or no candidate with times of the shape's kind, the
//      table's nearest shape of the same kind: its
//      variant's configuration, with its K split taken from the device (a `ks` or `slices` of 0);
//   4. without a usable entry: gemv for M <= 16, gemv_cols for N <= 16, a split-K tile when the
//      output tiles fill fewer than the SMs, otherwise the arithmetic's fastest rung.
// A candidate that refuses the shape (its precondition, the device) is passed over. The choice
// is recorded with each result (`choice`: family, variant, rule).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda_check.h"
#include "launch.cuh"
#include "shape_model.h"
#include "timed_choice.h"

namespace gemm {
namespace {

enum class Arithmetic { fp32, tf32, fp64 };

struct TableEntry {
  Arithmetic arithmetic;
  std::int64_t m, n, k;
  const char* variant;
};
constexpr TableEntry kTable[] = {
#define GEMM_AUTO(ARITHMETIC, M, N, K, VARIANT) {Arithmetic::ARITHMETIC, M, N, K, VARIANT},
#include "auto_table.inc"
#undef GEMM_AUTO
    {Arithmetic::fp32, 0, 0, 0, nullptr},  // the end (the table is empty before a first sweep)
};

// Every candidate's median time at every suite shape of the sweep: what the model scales.
struct TimeEntry {
  Arithmetic arithmetic;
  std::int64_t m, n, k;
  const char* variant;
  double ms;
};
constexpr TimeEntry kTimes[] = {
#define GEMM_AUTO_TIME(ARITHMETIC, M, N, K, VARIANT, MS) {Arithmetic::ARITHMETIC, M, N, K, VARIANT, MS},
#include "auto_times.inc"
#undef GEMM_AUTO_TIME
    {Arithmetic::fp32, 0, 0, 0, nullptr, 0.0},
};
constexpr int kModelReferences = 2;  // nearest sweep shapes per candidate

Precision precision_of(Arithmetic a) { return a == Arithmetic::fp64 ? Precision::fp64 : Precision::fp32; }

const char* name_of(Arithmetic a) {
  return a == Arithmetic::fp32 ? "fp32" : a == Arithmetic::tf32 ? "tf32" : "fp64";
}

// Whether a variant may serve the arithmetic: as accurate or more, and a kernel of ours (never a
// dispatcher: choosing one would ask choose() again under its lock).
bool serves(const Variant& v, Arithmetic a) {
  if (v.backend != Backend::cuda_kernel || v.precision != precision_of(a)) return false;
  if (v.has_tag(tag::dispatch)) return false;
  return a != Arithmetic::fp32 || v.compute == Compute::fp32;
}

const Variant* find(const std::string& name, Arithmetic a) {
  for (const Variant& v : all_variants())
    if (v.name() == name && serves(v, a)) return &v;
  return nullptr;
}

// A family's default: a rung's representative, or the first device-split instance of a family
// for shapes (the instances that are not tuning sweeps).
const Variant* default_of(const std::string& family, Arithmetic a) {
  for (const Variant& v : all_variants())
    if (v.family == family && v.role != Role::sweep && serves(v, a)) return &v;
  return nullptr;
}

// The name with its K split taken from the device: ks:S or slices:S as 0.
std::string with_device_split(const std::string& name) {
  std::string out;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t end = std::min(name.find('/', start), name.size());
    std::string part = name.substr(start, end - start);
    if (part.rfind("ks:", 0) == 0) part = "ks:0";
    if (part.rfind("slices:", 0) == 0) part = "slices:0";
    out += (out.empty() ? "" : "/") + part;
    start = end + 1;
  }
  return out;
}

// The current device's limits, for the candidates' preconditions (an unknown device, 0.0, where
// there is none: nothing is refused for its architecture).
const DeviceLimits& device_limits() {
  static const DeviceLimits limits = [] {
    DeviceLimits d;
    int device = 0;
    cudaDeviceProp p{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&p, device) != cudaSuccess) {
      cudaGetLastError();
      return d;
    }
    d.max_threads_per_block = p.maxThreadsPerBlock;
    for (int i = 0; i < 3; ++i) {
      d.max_block_dim[i] = p.maxThreadsDim[i];
      d.max_grid_dim[i] = p.maxGridSize[i];
    }
    d.max_smem_per_block = p.sharedMemPerBlock;
    d.max_smem_per_block_optin = p.sharedMemPerBlockOptin;
    d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    d.sm_count = p.multiProcessorCount;
    d.warp_size = p.warpSize;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    return d;
  }();
  return limits;
}

// A candidate the model ranked: its predicted time and where the prediction came from.
struct Ranked {
  const Variant* variant = nullptr;
  double predicted_ms = 0.0;
  std::string from;  // "AxBxC and DxExF": the sweep shapes it was scaled from
};

struct Choice {
  const Variant* variant = nullptr;
  std::string rule;
  std::vector<Ranked> to_time;  // the model's fastest predictions, until the first run times them
};

// Whether a candidate takes the shape on this device; without one (listing on a machine with no
// GPU) its own precondition alone decides: launch limits need a device to check against.
bool takes(const Variant* v, const GemmShape& s, const DeviceLimits& d) {
  if (v == nullptr) return false;
  if (d.sm_count == 0) return !v->can_implement || !v->can_implement(s, d);
  return !check_launch(*v, s, d);
}

// A shape takes a configuration or a time only from sweep shapes of its kind (dispatch::
// shape_kind): a kernel that serves 64 columns says nothing about one.
int kind_of(std::int64_t m, std::int64_t n) { return dispatch::shape_kind(m, n); }

template <typename Entry>
double distance(const Entry& e, const GemmShape& s) {
  return dispatch::shape_distance(e.m, e.n, e.k, s.m, s.n, s.k);
}

// The busiest SM's work when `v` runs `s` on this GPU (shape_model.h), from v's launch plan.
double busiest_sm_work(const Variant& v, const GemmShape& s, const DeviceLimits& d) {
  const LaunchPlan p = v.plan(s);
  const std::string name = v.name();
  dispatch::TileGeometry g;
  g.m = s.m, g.n = s.n, g.k = s.k;
  // The plan's tile where it says one (the tuned rung's configuration at this shape), else the
  // name's.
  g.bm = p.tile_m > 0 ? p.tile_m : dispatch::name_param(name, "bm");
  g.bn = p.tile_n > 0 ? p.tile_n : dispatch::name_param(name, "bn");
  g.bk = p.tile_k > 0 ? p.tile_k : dispatch::name_param(name, "bk");
  g.grid_blocks = p.grid.count();
  g.persistent = v.persistent_grid;
  return dispatch::busiest_sm_work(g, d.sm_count);
}

std::string shape_text(std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", ms);
  return text;
}

std::string model_rule(const Ranked& r) {
  return "model: " + ms_text(r.predicted_ms) + " ms, scaled from its times at " + r.from;
}

// Rule 2: every candidate with a prediction, the shortest first (a tie: the first by name).
// Needs a device: plans and SMs.
std::vector<Ranked> by_model(Arithmetic a, const GemmShape& s, const DeviceLimits& d) {
  std::vector<Ranked> ranked;
  if (d.sm_count == 0) return ranked;
  std::map<std::string, std::vector<const TimeEntry*>> timed;  // by candidate, in name order
  for (const TimeEntry& t : kTimes)
    if (t.variant != nullptr && t.arithmetic == a && kind_of(t.m, t.n) == kind_of(s.m, s.n))
      timed[t.variant].push_back(&t);
  for (auto& [name, entries] : timed) {
    const Variant* v = find(name, a);
    if (!takes(v, s, d) || !v->plan) continue;
    // The nearest, a shape of the other alignment (other code paths) counting farther.
    const int bytes = a == Arithmetic::fp64 ? 8 : 4;
    auto rank = [&](const TimeEntry* t) {
      return dispatch::reference_distance(s.m, s.n, s.k, t->m, t->n, t->k, bytes);
    };
    std::stable_sort(entries.begin(), entries.end(),
                     [&](const TimeEntry* x, const TimeEntry* y) { return rank(x) < rank(y); });
    const double here = busiest_sm_work(*v, s, d);
    double sum = 0.0;
    std::string from;
    const int refs = std::min<int>(kModelReferences, int(entries.size()));
    for (int i = 0; i < refs; ++i) {
      const TimeEntry& t = *entries[i];
      sum += dispatch::scaled_ms(t.ms, busiest_sm_work(*v, {t.m, t.n, t.k}, d), here);
      from += (i ? " and " : "") + shape_text(t.m, t.n, t.k);
    }
    if (refs > 0) ranked.push_back({v, sum / refs, from});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& x, const Ranked& y) { return x.predicted_ms < y.predicted_ms; });
  return ranked;
}

// The model's choice: its fastest prediction, with the few to time at the first run.
Choice model_choice(std::vector<Ranked> ranked) {
  Choice c{ranked.front().variant, model_rule(ranked.front())};
  if (ranked.size() > 1) {
    ranked.resize(std::min<std::size_t>(ranked.size(), dispatch::kTimedCandidates));
    c.to_time = std::move(ranked);
  }
  return c;
}

// Rule 3: without a table entry that takes the shape.
Choice by_shape(Arithmetic a, const GemmShape& s, const DeviceLimits& d) {
  const bool tensor = a != Arithmetic::fp32;
  const std::int64_t tiles = ((s.m + 127) / 128) * ((s.n + 127) / 128);
  std::vector<std::pair<const char*, const char*>> order;  // (family, why), first that takes it
  if (s.m <= 16) order.push_back({"gemv", "M <= 16: bound by reading B"});
  if (s.n <= 16) order.push_back({"gemv_cols", "N <= 16: bound by reading A"});
  if (d.sm_count == 0 || tiles < d.sm_count)
    order.push_back({tensor ? "split_k_mma" : "split_k", "fewer 128 x 128 tiles than SMs"});
  if (a == Arithmetic::tf32) order.push_back({"wgmma_tma", "the TF32 rungs' fastest"});
  if (a == Arithmetic::tf32) order.push_back({"mma_tf32_pipelined", "TF32 at any alignment"});
  if (a == Arithmetic::fp64) order.push_back({"mma_fp64_m16n8k16", "the FP64 rungs' fastest"});
  order.push_back({"tuned", "the CUDA-core ladder's fastest, any shape"});
  for (const auto& [family, why] : order)
    if (const Variant* v = default_of(family, a); takes(v, s, d))
      return {v, std::string("rule: ") + why};
  return {};
}

Choice choose_uncached(Arithmetic a, const GemmShape& s, const DeviceLimits& d) {
  const TableEntry* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const TableEntry& e : kTable) {
    if (e.variant == nullptr || e.arithmetic != a) continue;
    if (e.m == s.m && e.n == s.n && e.k == s.k)
      if (const Variant* v = find(e.variant, a); takes(v, s, d)) return {v, "table"};
  }
  if (std::vector<Ranked> ranked = by_model(a, s, d); !ranked.empty()) return model_choice(std::move(ranked));
  for (const TableEntry& e : kTable) {
    if (e.variant == nullptr || e.arithmetic != a) continue;
    if (kind_of(e.m, e.n) != kind_of(s.m, s.n)) continue;
    const Variant* v = find(with_device_split(e.variant), a);
    if (takes(v, s, d) && distance(e, s) < best) {
      best = distance(e, s);
      nearest = &e;
    }
  }
  if (nearest)
    return {find(with_device_split(nearest->variant), a),
            "nearest table shape " + std::to_string(nearest->m) + "x" + std::to_string(nearest->n) +
                "x" + std::to_string(nearest->k)};
  return by_shape(a, s, d);
}

// A shape's choice, with its own lock: the first run at a shape off the table times candidates
// under it, and only callers of that shape wait meanwhile.
struct Slot {
  std::mutex mutex;
  Choice choice;
};

// The slot of a shape, its choice made once (for the device current at the first call: one
// choice per process and shape, whichever device runs it later).
Slot& slot_of(Arithmetic a, const GemmShape& s) {
  static std::mutex slots_mutex;
  static std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, Slot> slots;
  std::lock_guard<std::mutex> lock(slots_mutex);
  const auto key = std::make_tuple(int(a), s.m, s.n, s.k);
  if (auto it = slots.find(key); it != slots.end()) return it->second;
  Choice c = choose_uncached(a, s, device_limits());  // a throw here leaves no slot behind
  Slot& slot = slots.try_emplace(key).first->second;
  slot.choice = std::move(c);
  return slot;
}

// A copy: the first run may settle the choice while another thread reads it.
Choice choose(Arithmetic a, const GemmShape& s) {
  Slot& slot = slot_of(a, s);
  std::lock_guard<std::mutex> lock(slot.mutex);
  return slot.choice;
}

void refuse_unchosen(Arithmetic a, const Choice& c, const GemmShape& s) {
  if (!c.variant)
    throw std::invalid_argument(std::string("auto: no ") + name_of(a) + " variant takes " + s.to_string());
}

// The workspace of a choice: while it has candidates to time, the largest any of them needs.
std::size_t workspace_of(const Choice& c, const GemmShape& s) {
  std::size_t bytes = c.variant ? c.variant->workspace_bytes(s) : 0;
  for (const Ranked& r : c.to_time) bytes = std::max(bytes, r.variant->workspace_bytes(s));
  return bytes;
}

// GEMM_AUTO_TIMING=off: the model's first prediction runs untimed (one pick per shape in every
// process, whatever the GPU's state at the first run); unset or "on": timed; else refused.
bool timing_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("GEMM_AUTO_TIMING");
    if (const std::optional<bool> on = dispatch::timing_setting(value)) return *on;
    throw std::invalid_argument(std::string("GEMM_AUTO_TIMING: expected on or off, got '") + value + "'");
  }();
  return enabled;
}

struct Event {
  cudaEvent_t event = nullptr;
  Event() { GEMM_CUDA_CHECK(cudaEventCreate(&event)); }
  ~Event() { cudaEventDestroy(event); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// Each candidate's per-launch times (ms), in rounds that take every candidate in turn after an
// untimed one. Before each sample of a candidate that keeps a workspace, its bytes are zeroed,
// as the workspace contract promises a variant the first time (another candidate's partial
// tiles may lie where its counters go); and once more at the end, for the one kept.
std::vector<std::vector<double>> time_candidates(const std::vector<Ranked>& to_time, const Operands& ops,
                                                 std::size_t workspace_bytes, cudaStream_t stream) {
  std::vector<int> launches;
  double round_ms = 0.0;
  for (const Ranked& r : to_time) {
    launches.push_back(dispatch::launches_per_sample(r.predicted_ms));
    round_ms += launches.back() * r.predicted_ms;
  }
  const auto zero = [&] {
    if (workspace_bytes > 0) GEMM_CUDA_CHECK(cudaMemsetAsync(ops.workspace, 0, workspace_bytes, stream));
  };
  const int rounds = dispatch::timing_rounds(round_ms);
  std::vector<std::vector<double>> samples(to_time.size());
  Event start, stop;
  for (int round = 0; round <= rounds; ++round) {
    for (std::size_t i = 0; i < to_time.size(); ++i) {
      const Variant& v = *to_time[i].variant;
      if (v.workspace_bytes(ops.shape) > 0) zero();
      GEMM_CUDA_CHECK(cudaEventRecord(start.event, stream));
      for (int l = 0; l < launches[i]; ++l) v.run(ops, stream);
      GEMM_CUDA_CHECK(cudaEventRecord(stop.event, stream));
      GEMM_CUDA_CHECK(cudaEventSynchronize(stop.event));
      float ms = 0.0f;
      GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event, stop.event));
      if (round > 0) samples[i].push_back(double(ms) / launches[i]);
    }
  }
  zero();
  return samples;
}

// Times the choice's candidates and keeps one (the caller holds its slot's lock).
void settle(Choice& c, const Operands& ops, cudaStream_t stream) {
  const std::size_t workspace = workspace_of(c, ops.shape);
  std::vector<std::vector<double>> samples;
  try {
    samples = time_candidates(c.to_time, ops, workspace, stream);
  } catch (const std::exception& e) {
    // The prediction stands, on a workspace zeroed again (a candidate that ran before the
    // failure may have left partial tiles where its counters go); the next run does not time.
    if (workspace > 0) cudaMemsetAsync(ops.workspace, 0, workspace, stream);  // best effort
    c.to_time.clear();
    c.rule += std::string(" (timing its candidates failed: ") + e.what() + ")";
    throw;
  }
  const std::size_t kept = dispatch::kept_index(samples);
  if (kept == samples.size()) {  // no usable sample: the prediction stands
    c.to_time.clear();
    return;
  }
  const Ranked& r = c.to_time[kept];
  c.variant = r.variant;
  c.rule = "timed: " + ms_text(dispatch::median_of(samples[kept])) + " ms, kept from the model's " +
           std::to_string(c.to_time.size()) + " fastest predictions (" + model_rule(r) + ")";
  c.to_time.clear();
}

// The variant to run. At the first run at a shape the model chose for, its candidates are timed
// and one is kept for good, unless:
//  - the stream is being captured into a CUDA graph (timing synchronizes): the fastest
//    prediction is kept for good, untimed, so that the graph and every later run use one
//    variant and one workspace layout;
//  - the caller's workspace is smaller than workspace() asks for (the largest any candidate
//    needs): refused, as any variant refuses less than it asks for (running one candidate there
//    and timing them later on another caller's buffer would switch the layout under the first);
//  - timing is off (GEMM_AUTO_TIMING=off): the fastest prediction, for good.
const Variant& settled(Arithmetic a, const Operands& ops, cudaStream_t stream) {
  Slot& slot = slot_of(a, ops.shape);
  std::lock_guard<std::mutex> lock(slot.mutex);
  Choice& c = slot.choice;
  refuse_unchosen(a, c, ops.shape);
  if (c.to_time.empty()) return *c.variant;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  GEMM_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone || !timing_enabled()) {
    c.rule += capture != cudaStreamCaptureStatusNone ? " (first run under graph capture: not timed)"
                                                     : " (GEMM_AUTO_TIMING=off: not timed)";
    c.to_time.clear();
    return *c.variant;
  }
  const std::size_t workspace = workspace_of(c, ops.shape);
  if (workspace > 0 && (ops.workspace == nullptr || ops.workspace_bytes < workspace))
    throw std::invalid_argument(std::string("auto: ") + name_of(a) + " at " + ops.shape.to_string() +
                                " needs a workspace of " + std::to_string(workspace) +
                                " bytes (workspace_bytes) to time its candidates; got " +
                                std::to_string(ops.workspace ? ops.workspace_bytes : 0));
  settle(c, ops, stream);
  return *c.variant;
}

std::string json_text(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

Variant dispatcher(Arithmetic a, const char* family, Compute compute) {
  KernelLaunch l;
  l.plan = [a](const GemmShape& s) {
    const Choice c = choose(a, s);
    refuse_unchosen(a, c, s);
    return c.variant->plan(s);
  };
  l.run = [a](const Operands& ops, cudaStream_t stream) { settled(a, ops, stream).run(ops, stream); };
  VariantBuilder b(family, precision_of(a));
  return b.compute(compute)
      .launch(l)
      .workspace([a](const GemmShape& s) {
        const Choice c = choose(a, s);
        refuse_unchosen(a, c, s);
        return workspace_of(c, s);
      })
      .precondition([a](const GemmShape& s, const DeviceLimits& d) -> std::optional<std::string> {
        const Choice c = choose(a, s);
        if (!c.variant) return std::string("no ") + name_of(a) + " variant takes this shape";
        return check_launch(*c.variant, s, d);
      })
      .choice([a](const GemmShape& s) {
        const Choice c = choose(a, s);
        if (!c.variant) return std::string();
        return "{\"family\": " + json_text(c.variant->family) + ", \"variant\": " +
               json_text(c.variant->name()) + ", \"rule\": " + json_text(c.rule) +
               ", \"arithmetic\": " + json_text(name_of(a)) + "}";
      })
      .outputs_per_thread(0)
      .spins()  // the variant it runs may poll (mbarriers, split counters)
      .tags({tag::tracked, tag::summary})
      .origin("the fastest variant per shape: kernels/dispatch/auto_table.inc, filled by "
              "gemm-tune-shapes from a suite sweep; elsewhere the fastest, timed at the first run, "
              "of the candidates whose sweep times, scaled to the shape's tiles and waves, predict "
              "the shortest times")
      .build();
}

}  // namespace

void add_auto_variants(std::vector<Variant>& out) {
  out.push_back(dispatcher(Arithmetic::fp32, "auto", Compute::fp32));
  out.push_back(dispatcher(Arithmetic::fp64, "auto", Compute::fp64));
  out.push_back(dispatcher(Arithmetic::tf32, "auto_tf32", Compute::tf32));
}

}  // namespace gemm
