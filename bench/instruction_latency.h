// What the account's schedule simulation (scripts/gemm_study/analysis/schedule.py) needs of each
// pipe beyond its throughput: how many cycles pass between an instruction and the first one that
// can use its result (its dependent latency), and how fast the integer ALU pipe issues, which
// pipe-peaks' FLOP forms do not cover. Measured by bench/instruction_latency.cu; pipe-peaks writes
// them into pipe_peaks.json beside the forms.
#pragma once

#include <string>
#include <vector>

#include "device_info.h"

namespace gemm::bench {

struct InstructionLatency {
  std::string pipe;    // fma | alu | fp64 | hmma_tf32 | dmma_884 | dmma_16816
  std::string sass;    // the instruction timed
  std::string method;  // what was timed, in words
  double cycles = 0;   // SM cycles from one instruction to the next that reads its result
};

// One warp, one chain of 64 dependent instructions per loop iteration (each reads the previous
// one's result), clock64 around the loop; throws std::runtime_error on a CUDA error.
std::vector<InstructionLatency> measure_instruction_latencies(const DeviceInfo& device);

struct IssueRate {
  std::string pipe;  // alu
  std::string sass;
  int warps_per_sm = 0;
  double inst_per_clk_per_sm = 0;  // warp instructions per SM per SM clock
};

// 32 warps per SM, 8 independent LOP3 chains each, the slowest block's clock64 cycles.
IssueRate measure_alu_rate(const DeviceInfo& device);

}  // namespace gemm::bench
