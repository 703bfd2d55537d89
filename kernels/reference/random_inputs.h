// The study's random inputs as a pure function of (seed, index): the host and the device compute
// the same value for every element, so the GPU fills gigabyte operands in a millisecond where a
// sequential generator on the host took a second, and a host copy (CPU variants, end-to-end
// copies) equals the device's bit for bit.
#pragma once

#include <cstdint>

#include "host_device.h"

namespace gemm {

// SplitMix64's output function over the Weyl sequence seed + (index + 1) * golden ratio: every
// index its own well-mixed 64-bit word, with no state carried from one element to the next.
GEMM_HOST_DEVICE inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1) on a grid of 2^-52 (both operations exact in double), never zero: a zero
// input hides unwritten outputs and wrong indexing, so it becomes 0.5.
GEMM_HOST_DEVICE inline double random_input(std::uint64_t seed, std::uint64_t index) {
  const double x = double(random_bits(seed, index) >> 11) * 0x1p-52 - 1.0;
  return x == 0.0 ? 0.5 : x;
}

}  // namespace gemm
