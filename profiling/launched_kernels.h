// Which kernels a launch function runs, by name, through CUPTI's activity API: what a library
// call (cuBLAS) chose for a shape is recorded with its results, since its speed depends on that
// choice and it can change with the library version or the heuristic's inputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gemm {

// The names of the kernels `launch` ran, in launch order (it runs once, synchronized). Throws
// std::runtime_error with the CUPTI reason when activity records cannot be collected (another
// profiler attached, no permission).
std::vector<std::string> launched_kernels(const std::function<void()>& launch);

}  // namespace gemm
