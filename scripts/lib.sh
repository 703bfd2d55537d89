# Sourced by the project's shell scripts: what each of them needs before its own work.
#   gemm_root            the checkout (this file's folder's parent)
#   gemm_tools           the folder of the gemm-* commands (scripts/bootstrap creates .venv on
#                        first use and installs them there); exit status 2 when it cannot
#   gemm_cuda_on_path    nvcc on PATH (the toolkit's default place when it is not)
#   gemm_has_gpu         whether nvidia-smi lists a GPU
#   gemm_build BUILD [TARGET...]
#                        configure (Release, Ninja) and build BUILD from the checkout (or from
#                        GEMM_BUILD_SOURCE, a copy of it), GEMM_GIT_REVISION naming the revision
#                        where set; the output goes to stdout/stderr, the caller logs it
# shellcheck shell=bash
gemm_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

gemm_tools() {
  local python
  python=$("$gemm_root/scripts/bootstrap") || return 2
  dirname "$python"
}

gemm_cuda_on_path() {
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
}

gemm_has_gpu() {
  nvidia-smi -L >/dev/null 2>&1
}

gemm_build() {  # BUILD [TARGET...]
  local build=$1 target_options=() target
  shift
  for target in "$@"; do target_options+=(--target "$target"); done
  gemm_cuda_on_path
  cmake -S "${GEMM_BUILD_SOURCE:-$gemm_root}" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    ${GEMM_GIT_REVISION:+-DGEMM_GIT_REVISION=$GEMM_GIT_REVISION} &&
    cmake --build "$build" "${target_options[@]}"
}
