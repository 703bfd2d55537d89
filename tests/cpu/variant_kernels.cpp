// variant-kernels: what every variant of the study launches, for sass_compare.py. For each
// variant of the registry (the sweep instances included) and each configuration of the tuned
// rung, one line of facts and, at three shapes that take the fast path and both tail paths, the
// address of the kernel its plan launches (the host stub, which carries the kernel's name).
// No GPU needed. Written against variant.h and ladder/tuned_configs.h alone, so that the same
// file builds against an older revision of the library too.
//
//   FACT  <precision>/<name>  <backend> <compute> <rung> <rung name> <origin> <note> <tags>
//         <outputs per thread> <params>
//   KERNEL  <precision>/<name>  <shape>  <address>
#include <cstdio>
#include <string>
#include <vector>

#include "ladder/tuned_configs.h"
#include "variant.h"

namespace {

using gemm::Variant;

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& x : items) s += (s.empty() ? "" : ",") + x;
  return s;
}

void print(const Variant& v, const char* set) {
  const std::string id = std::string(set) + to_string(v.precision) + "/" + v.name();
  std::string params;
  for (const auto& p : v.param_fields)
    params += (params.empty() ? "" : ",") + p.key + "=" + std::to_string(p.value);
  std::printf("FACT\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%g\t%s\n", id.c_str(),
              to_string(v.backend).c_str(), to_string(v.compute).c_str(), v.rung,
              v.rung_name.c_str(), v.origin.c_str(), v.note.c_str(), joined(v.tags).c_str(),
              v.outputs_per_thread, params.c_str());
  if (v.backend != gemm::Backend::cuda_kernel) return;
  // Whole tiles of every block tile; N and K multiples of 4 but no tile's; anything.
  const gemm::GemmShape shapes[] = {{4096, 4096, 4096}, {4092, 4092, 4092}, {4095, 4097, 4093}};
  for (const auto& s : shapes)
    std::printf("KERNEL\t%s\t%s\t%p\n", id.c_str(), s.to_string().c_str(), v.plan(s).kernel);
}

}  // namespace

int main() {
  for (const Variant& v : gemm::all_variants()) print(v, "");
  for (const Variant& v : gemm::tuned_configurations()) print(v, "tuned_config:");
  return 0;
}
