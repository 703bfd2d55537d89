// sm_90a-only PTX wrappers: wgmma and setmaxnreg. Included only by the families of the sm90a
// build column (kernels/manifest.inc), which are compiled with -gencode=arch=compute_90a,code=
// sm_90a and nothing else. (Their copies and barriers, TMA and mbarriers: common/async_copy.cuh.)
#pragma once

#include <cstdint>

#include "common/async_copy.cuh"
#include "tensor_ptx.cuh"

namespace gemm::tensor {

// --- wgmma -----------------------------------------------------------------------------------
// Shared-memory matrix descriptor of a K-major operand in the 128-byte swizzle layout that TMA
// writes with CU_TENSOR_MAP_SWIZZLE_128B: rows of 128 bytes (32 TF32 along K), 8-row groups
// 1024 bytes apart (stride byte offset), the tile 1024-byte aligned. The leading byte offset is
// unused for swizzled K-major layouts (set to 1, i.e. 16 bytes, as is customary). Bits: 0-13
// start address >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 62-63 layout (1 = 128-byte swizzle).
// Stepping K by 8 TF32 inside the 128-byte row is +32 bytes on the start address: the hardware
// applies the swizzle to the full address, which is why the tile must be 1024-byte aligned.
__device__ __forceinline__ std::uint64_t desc_k_major_sw128(std::uint32_t smem_byte_addr) {
  std::uint64_t d = 0;
  d |= std::uint64_t((smem_byte_addr & 0x3FFFF) >> 4);
  d |= std::uint64_t(16 >> 4) << 16;
  d |= std::uint64_t(1024 >> 4) << 32;
  d |= std::uint64_t(1) << 62;
  return d;
}

// setmaxnreg: moves registers between the warpgroups of a block (a warp-specialized kernel gives
// its producer few and its consumers many). Every warp of a warpgroup must execute the same one,
// and it only takes effect when the kernel starts under a register cap (__launch_bounds__(T, 1)).
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// Orders this thread's earlier register writes (fragments, accumulators) before the wgmma reads.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// The register-A forms of wgmma for TF32 (PTX: "wgmma.mma_async ... .tf32.tf32 d, a, b-desc,
// scale-d, imm-scale-a, imm-scale-b"): A is 64 x 8 and lives in registers, in the m16n8k8 A
// layout per warp (warp w of the warpgroup holds rows 16w .. 16w + 15; lane (g, t): a[0] = (g, t),
// a[1] = (g + 8, t), a[2] = (g, t + 4), a[3] = (g + 8, t + 4)). Accumulator layout, per warp: d[4i]
// = (16w + g, 8i + 2t), d[4i + 1] = (.., 8i + 2t + 1), d[4i + 2] = (16w + g + 8, 8i + 2t),
// d[4i + 3] = (.., 8i + 2t + 1). scale-d = 1 (accumulate); the caller zeroes d first.
// D (64 x N, FP32, N / 2 registers per thread) += A (64 x 8, TF32, registers) * B (8 x N, TF32,
// shared memory, K-major, described by desc_b), for N = 64, 128 or 256: one instruction at three
// widths, whose operand lists the macros below spell out (an asm statement takes them literally).
#define GEMM_WGMMA_D8(i)                                                                       \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define GEMM_WGMMA_D32(i) GEMM_WGMMA_D8(i), GEMM_WGMMA_D8(i + 8), GEMM_WGMMA_D8(i + 16), GEMM_WGMMA_D8(i + 24)
#define GEMM_WGMMA_D64(i)                                                                   \
  GEMM_WGMMA_D8(i), GEMM_WGMMA_D8(i + 8), GEMM_WGMMA_D8(i + 16), GEMM_WGMMA_D8(i + 24),     \
      GEMM_WGMMA_D8(i + 32), GEMM_WGMMA_D8(i + 40), GEMM_WGMMA_D8(i + 48), GEMM_WGMMA_D8(i + 56)
#define GEMM_WGMMA_REGS_0_31                                                               \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                  \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define GEMM_WGMMA_REGS_0_63                                                               \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                  \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "        \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "        \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define GEMM_WGMMA_REGS_64_127                                                             \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "      \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "        \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "  \
  "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "    \
  "%125, %126, %127"
#define GEMM_WGMMA_A_AND_DESC "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b)

template <int N>
__device__ __forceinline__ void wgmma_tf32_rs(float (&d)[N / 2], const std::uint32_t (&a)[4],
                                              std::uint64_t desc_b) {
  static_assert(N == 64 || N == 128 || N == 256, "the widths the wgmma kernels use");
  if constexpr (N == 64) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {" GEMM_WGMMA_REGS_0_31
                 "}, {%32, %33, %34, %35}, %36, 1, 1, 1;\n"
                 : GEMM_WGMMA_D32(0)
                 : GEMM_WGMMA_A_AND_DESC);
  } else if constexpr (N == 128) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" GEMM_WGMMA_REGS_0_63
                 "}, {%64, %65, %66, %67}, %68, 1, 1, 1;\n"
                 : GEMM_WGMMA_D64(0)
                 : GEMM_WGMMA_A_AND_DESC);
  } else {
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" GEMM_WGMMA_REGS_0_63
                 GEMM_WGMMA_REGS_64_127 "}, {%128, %129, %130, %131}, %132, 1, 1, 1;\n"
                 : GEMM_WGMMA_D64(0), GEMM_WGMMA_D64(64)
                 : GEMM_WGMMA_A_AND_DESC);
  }
}

#undef GEMM_WGMMA_D8
#undef GEMM_WGMMA_D32
#undef GEMM_WGMMA_D64
#undef GEMM_WGMMA_REGS_0_31
#undef GEMM_WGMMA_REGS_0_63
#undef GEMM_WGMMA_REGS_64_127
#undef GEMM_WGMMA_A_AND_DESC

}  // namespace gemm::tensor
