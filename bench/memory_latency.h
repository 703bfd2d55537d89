// The latencies the bottleneck account charges a k-tile whose loads are not overlapped with
// compute: one load's round trip from L1, from L2 and from DRAM, from shared memory, and a block-wide
// barrier, each measured on an idle GPU by bench/memory_latency.cu; and the rate at which L2
// serves the whole chip's loads, which sets how long the last of a k-tile's loads waits when
// every SM asks at once (pipe-peaks writes them into pipe_peaks.json beside the throughputs).
#pragma once

#include <string>
#include <vector>

#include "device_info.h"

namespace gemm::bench {

struct Latency {
  std::string level;   // shared | l1 | l2 | dram | barrier
  std::string method;  // what was timed, in words (for the JSON and the printout)
  double cycles = 0;   // SM cycles per dependent access (or per barrier)
};

// Pointer chases (one thread, each load's address the previous load's value) and a barrier loop;
// throws std::runtime_error on a CUDA error.
std::vector<Latency> measure_latencies(const DeviceInfo& device);

struct Bandwidth {
  std::string level;   // l2_read
  std::string method;  // what was timed, in words
  double gbs = 0;      // GB/s, the whole chip
};

// Every SM reading an L2-resident buffer with 16-byte ld.global.cg loads; kernel time by CUDA
// events, the best of 5 launches after a warm-up.
Bandwidth measure_l2_read_bandwidth(const DeviceInfo& device);

}  // namespace gemm::bench
