// gemv: C = A B for M <= 16 rows of A on the CUDA cores, bound by reading B once
// (shapes/gemv_kernel.cuh explains the kernel). A decode step of a language model multiplies a
// handful of token rows by a weight matrix: 1 x 4096 x 4096 in FP32 reads 64 MB of B for 33
// MFLOP, so the rate to reach is the memory's, not the FMA pipe's.
//
// K slices: ks:0 takes as many slices as give one wave of resident blocks (N / BN column blocks
// alone are 32 at N = 4096: a quarter of the SMs), ks:S asks for S (the tuning sweep). With more
// than one slice the blocks store partial sums in the workspace and the slices are added in
// order, the same sum in every run.
#include <string>

#include "shapes/gemv_kernel.cuh"
#include "shapes/split_launch.cuh"

namespace gemm {
namespace {

using namespace gemm::shapes;

constexpr int kMaxRows = 16;

// The instance for M rows: the smallest MT of 1, 2, 4, 8, 16 that holds them.
template <typename T, GemvConfig C, bool ALIGNED>
const void* gemv_instance(int rows) {
  if (rows <= 1) return reinterpret_cast<const void*>(gemv_kernel<GemvShape<T, C, 1>, ALIGNED>);
  if (rows <= 2) return reinterpret_cast<const void*>(gemv_kernel<GemvShape<T, C, 2>, ALIGNED>);
  if (rows <= 4) return reinterpret_cast<const void*>(gemv_kernel<GemvShape<T, C, 4>, ALIGNED>);
  if (rows <= 8) return reinterpret_cast<const void*>(gemv_kernel<GemvShape<T, C, 8>, ALIGNED>);
  return reinterpret_cast<const void*>(gemv_kernel<GemvShape<T, C, 16>, ALIGNED>);
}

// One configuration at one requested slice count (0: the rule), for every M <= 16.
template <typename T, GemvConfig C>
struct Gemv {
  using S1 = GemvShape<T, C, 1>;  // the geometry that does not depend on MT
  static constexpr int V = S1::V;

  static bool aligned(const GemmShape& s) { return s.k % V == 0 && s.n % V == 0; }
  static int rows_computed(const GemmShape& s) {
    return s.m <= 1 ? 1 : s.m <= 2 ? 2 : s.m <= 4 ? 4 : s.m <= 8 ? 8 : 16;
  }
  static std::size_t smem(const GemmShape& s) {
    return std::size_t(C.warps) * rows_computed(s) * S1::BN * sizeof(T);
  }
  static const void* kernel(const GemmShape& s) {
    return aligned(s) ? gemv_instance<T, C, true>(int(s.m)) : gemv_instance<T, C, false>(int(s.m));
  }
  static std::int64_t column_blocks(const GemmShape& s) { return div_up(s.n, S1::BN); }

  // K in units of K_UNIT rows, cut into slices.
  static SplitK split(const GemmShape& s, int ks) {
    const int units = int(div_up(s.k, S1::K_UNIT));
    if (ks > 0) return SplitK::make(units, ks);
    const std::int64_t slots = resident_blocks(kernel(s), S1::THREADS, smem(s));
    return SplitK::make(units, slices_to_fill(column_blocks(s), units, slots, 1.0, C.unroll));
  }
  static LaunchPlan plan(const GemmShape& s, int ks) {
    LaunchPlan p;
    p.grid = {column_blocks(s), split(s, ks).slices, 1};
    p.block = {S1::THREADS, 1, 1};
    p.dynamic_smem_bytes = smem(s);
    p.kernel = kernel(s);
    return p;
  }
  static SplitWorkspace workspace(const GemmShape& s, int ks) {
    return matrix_split_workspace<T>(column_blocks(s), split(s, ks).slices, s);
  }

  template <int MT, bool ALIGNED>
  static void run_instance(const Operands& ops, cudaStream_t stream, int ks) {
    const GemmShape& s = ops.shape;
    const SplitK k = split(s, ks);
    const MatrixSplit<T> w = matrix_split<T>(ops, workspace(s, ks), k.slices, "gemv");
    launch_split(plan(s, ks), stream, gemv_kernel<GemvShape<T, C, MT>, ALIGNED>, k.slices > 1,
                 static_cast<const T*>(ops.a), static_cast<const T*>(ops.b),
                 static_cast<T*>(ops.c), int(s.m), int(s.n), int(s.k), k.per_slice * S1::K_UNIT,
                 w.shares, w.counters);
  }
  template <bool ALIGNED>
  static void run_aligned(const Operands& ops, cudaStream_t stream, int ks) {
    const std::int64_t m = ops.shape.m;
    if (m <= 1) return run_instance<1, ALIGNED>(ops, stream, ks);
    if (m <= 2) return run_instance<2, ALIGNED>(ops, stream, ks);
    if (m <= 4) return run_instance<4, ALIGNED>(ops, stream, ks);
    if (m <= 8) return run_instance<8, ALIGNED>(ops, stream, ks);
    return run_instance<16, ALIGNED>(ops, stream, ks);
  }
  static void run(const Operands& ops, cudaStream_t stream, int ks) {
    if (aligned(ops.shape))
      run_aligned<true>(ops, stream, ks);
    else
      run_aligned<false>(ops, stream, ks);
  }
};

std::optional<std::string> gemv_reason(const GemmShape& s, const DeviceLimits&) {
  if (s.m > kMaxRows)
    return "M > " + std::to_string(kMaxRows) +
           ": the GEMV kernel keeps a thread's sums for at most 16 rows of A in registers "
           "(a tiled split-K kernel takes more rows)";
  if (s.k > std::int64_t(1) << 30 || s.n > std::int64_t(1) << 30)
    return std::string("K or N > 2^30: the kernel's row and column indices are 32-bit");
  return std::nullopt;
}

template <typename T, GemvConfig C>
void add_config(std::vector<Variant>& out, int ks, Role role) {
  using G = Gemv<T, C>;
  KernelLaunch l;
  l.plan = [ks](const GemmShape& s) { return G::plan(s, ks); };
  l.run = [ks](const Operands& ops, cudaStream_t stream) { G::run(ops, stream, ks); };
  out.push_back(VariantBuilder::of<T>("gemv")
                    .params({{"warps", C.warps}, {"vectors", C.vectors}, {"unroll", C.unroll},
                             {"ks", ks}})
                    .launch(l)
                    .workspace([ks](const GemmShape& s) { return G::workspace(s, ks).bytes(); })
                    .outputs_per_thread(0)
                    .precondition(gemv_reason)
                    .spins()  // with the grid resident at once, the K slices wait for each other
                    .role(role)
                    .note("M <= 16; ks:0 cuts K into as many slices as fill the SMs once, ks:S "
                          "into S; partial sums added in slice order (deterministic)")
                    .build());
}

}  // namespace

void add_gemv_variants(std::vector<Variant>& out) {
  // Four warps per block, each a K sub-range, with the K slices from the device or fixed (the
  // tuning instances); eight warps, for fewer slices of deeper blocks.
  constexpr GemvConfig kFour{.warps = 4, .vectors = 1, .unroll = 4};
  constexpr GemvConfig kEight{.warps = 8, .vectors = 1, .unroll = 4};
  for_each_precision([&]<typename Tag>(Tag) {
    using T = typename Tag::type;
    add_config<T, kFour>(out, 0, Role::none);
    add_config<T, kEight>(out, 0, Role::none);
    for (int ks : {1, 4, 8, 16, 32, 64}) add_config<T, kFour>(out, ks, Role::sweep);
  });
}

}  // namespace gemm
