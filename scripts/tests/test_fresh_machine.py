"""Two commands on a fresh machine: scripts/bootstrap names what is missing in one line each,
and scripts/run_study.sh runs its stages, shows progress and writes the time breakdown."""

import json
import os
import shutil
import stat
import subprocess

import pytest
from conftest import SCRIPTS, write_contract_run

ROOT = SCRIPTS.parent
BOOTSTRAP = SCRIPTS / "bootstrap"


def tool_dir(tmp_path, tools):
    """A PATH folder holding only the named programs (links to the real ones)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    for tool in tools:
        real = shutil.which(tool)
        if real:
            (folder / tool).symlink_to(real)
    return folder


def executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.mark.skipif(not shutil.which("cmake"), reason="needs cmake to hide ninja next to it")
def test_missing_cxx_prerequisite_is_one_line_with_its_package(tmp_path):
    folder = tool_dir(tmp_path, ["bash", "env", "dirname", "cmake", "nvcc"])  # no ninja
    proc = subprocess.run(
        ["bash", str(BOOTSTRAP), "--cxx"],
        capture_output=True,
        text=True,
        env={"PATH": str(folder), "CMAKE_PREFIX_PATH": ""},
    )
    assert proc.returncode == 2
    assert "missing ninja: apt-get install ninja-build" in proc.stderr
    assert all(line.startswith("bootstrap: missing ") for line in proc.stderr.splitlines())


def test_missing_python_package_is_one_line_with_how_to_get_it(tmp_path):
    requirements = tmp_path / "requirements.txt"
    # pip is in every virtual environment: a requirement that is met must not be listed.
    requirements.write_text("pip>=1\nno-such-package-gemm-study>=1\n")
    env = dict(
        os.environ,
        GEMM_VENV=str(tmp_path / "venv"),
        GEMM_REQUIREMENTS=str(requirements),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS="",
    )
    proc = subprocess.run([str(BOOTSTRAP)], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "missing Python packages: no-such-package-gemm-study>=1" in proc.stderr
    assert "pip install 'no-such-package-gemm-study>=1'" in proc.stderr
    assert (tmp_path / "venv" / "bin" / "python").exists()  # created with the system's packages


def test_the_study_needs_only_its_own_packages_offline(tmp_path):
    """As on the GPU machine (no network): with the study's packages present, bootstrap succeeds
    whatever test-only or optional package is missing; --test names those in one line."""
    met, unmet = tmp_path / "met.txt", tmp_path / "unmet.txt"
    met.write_text("pip>=1\n")
    unmet.write_text("no-such-test-package-gemm-study>=1\n")
    env = dict(
        os.environ,
        GEMM_VENV=str(tmp_path / "venv"),
        GEMM_REQUIREMENTS=str(met),
        GEMM_REQUIREMENTS_TEST=str(unmet),
        GEMM_REQUIREMENTS_NO_DEPS=str(unmet),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS="",
    )
    plain = subprocess.run([str(BOOTSTRAP)], capture_output=True, text=True, env=env)
    assert plain.returncode == 0 and plain.stdout.strip().endswith("/bin/python"), plain.stderr
    with_tests = subprocess.run([str(BOOTSTRAP), "--test"], capture_output=True, text=True, env=env)
    assert with_tests.returncode == 2 and with_tests.stderr.count("\n") == 1
    assert "missing Python packages: no-such-test-package-gemm-study>=1" in with_tests.stderr


def test_the_study_requirements_are_the_four_it_runs():
    """numpy, pandas, matplotlib, scipy: everything else is for tests or optional."""
    lines = [
        line.split(">=")[0]
        for line in (SCRIPTS / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert lines == ["numpy", "pandas", "matplotlib", "scipy"]


FAKE_BENCH = r"""#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
open(LOG, "a").write(" ".join(args) + "\n")
if "--list" in args:
    sys.exit(0)
out = next(a.split("=", 1)[1] for a in args if a.startswith("--benchmark_out="))
data = json.load(open(RUN))
data["context"]["gpu_slug"] = "fakegpu"
for entry in data["benchmarks"]:
    entry.update(stage_verify_s=0.01, stage_timing_s=0.02, stage_counters_s=0.03)
n = len(data["benchmarks"])
for k, entry in enumerate(data["benchmarks"][:3], 1):
    print(f"[{k}/{n}] {entry['name']}  1000 GFLOP/s  0.1 s  ETA 1 s", file=sys.stderr)
json.dump(data, open(out, "w"))
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """One project environment for the study tests (bootstrap creates it once)."""
    folder = tmp_path_factory.mktemp("venv") / "venv"
    proc = subprocess.run([str(BOOTSTRAP)], capture_output=True, text=True, env=dict(os.environ, GEMM_VENV=str(folder)))
    assert proc.returncode == 0, proc.stderr
    return folder


def test_quick_study_shows_stages_progress_and_time_breakdown(tmp_path, venv):
    build = tmp_path / "build"
    (build / "bench").mkdir(parents=True)
    log = tmp_path / "bench-args.log"
    run = write_contract_run(tmp_path / "run.json")
    executable(build / "bench" / "gemm-bench", FAKE_BENCH.replace("LOG", repr(str(log))).replace("RUN", repr(str(run))))
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    executable(fakes / "cmake", "#!/bin/sh\nexit 0\n")
    executable(fakes / "nvidia-smi", "#!/bin/sh\necho 'GPU 0: Fake GPU (UUID: GPU-0)'\n")
    env = dict(os.environ, PATH=f"{fakes}:{os.environ['PATH']}", BUILD_DIR=str(build), GEMM_VENV=str(venv))
    proc = subprocess.run(
        [str(SCRIPTS / "run_study.sh"), "--quick", str(tmp_path / "reports")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    terminal = proc.stdout + proc.stderr
    assert proc.returncode == 0, terminal[-3000:]
    bench_args = log.read_text()
    assert "--sizes=1024,2048 --precisions=fp32 --end-to-end=off" in bench_args
    assert "--min-time" not in bench_args, "the samples per benchmark are gemm-bench's to choose"
    for stage in ("== build", "== gemm-bench", "== cross-check", "== report", "== where the time went"):
        assert stage in terminal
    assert "[1/" in terminal and "ETA" in terminal  # gemm-bench's progress reached the terminal
    out = tmp_path / "reports" / "fakegpu"
    recorded = json.loads((out / "stages.json").read_text())
    assert {"prerequisites", "build", "bench", "verify", "timing", "counters", "crosscheck", "report"} <= set(
        recorded["stages"]
    )
    assert recorded["settings"]["quick"] == "1"
    assert "[1/" in (out / "logs" / "gemm-bench.progress.log").read_text()
    assert "## Where the study's time went" in (out / "report.md").read_text()


# What gemm-bench --cpu-only prints (its context without GPU settings: CTest's cli.cpu_only).
CPU_ONLY_BENCH = r"""#!/bin/sh
echo "counters_capped: []"
echo "git_revision: 0123abcd"
echo "timing: host time of the serial CPU baseline (no GPU in this run)"
echo "gemm/fp32/cpu_serial/m:256/n:256/k:256/manual_time  12.5 ms"
"""
FAKE_CMAKE = (
    "#!/bin/sh\necho '[1/2] Building CUDA object kernels/naive.cu.o'\necho 'a compiler warning'\n"
    "echo '[2/2] Linking CXX executable bench/gemm-bench'\n"
)


@pytest.mark.parametrize("quick", [True, False])
def test_without_a_gpu_the_study_says_what_runs_and_keeps_its_logs(tmp_path, venv, quick):
    """No GPU: the build shows ninja's progress and its log stays; the study says which part
    needs a GPU (the quick one or the full one), runs the CPU baseline, keeps its log, and
    leaves no temporary folder behind."""
    build = tmp_path / "build"
    (build / "bench").mkdir(parents=True)
    executable(build / "bench" / "gemm-bench", CPU_ONLY_BENCH)
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    executable(fakes / "cmake", FAKE_CMAKE)
    executable(fakes / "nvidia-smi", "#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2\nexit 9\n")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = dict(
        os.environ,
        PATH=f"{fakes}:{os.environ['PATH']}",
        BUILD_DIR=str(build),
        GEMM_VENV=str(venv),
        TMPDIR=str(temporary),
    )
    argv = [str(SCRIPTS / "run_study.sh"), *(["--quick"] if quick else []), str(tmp_path / "reports")]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    terminal = proc.stdout + proc.stderr
    assert proc.returncode == 0, terminal[-3000:]
    assert "[1/2] Building CUDA object" in terminal and "a compiler warning" not in terminal
    assert "a compiler warning" in (build / "study-logs" / "build.log").read_text()
    assert f"log: {build}/study-logs/build.log" in terminal
    expected = (
        "--quick's GPU part (sizes 1024,2048, fp32)" if quick else "the study (sizes 512,1024,2048,4096, fp32,fp64)"
    )
    assert f"Not run: {expected}" in terminal and "--quick was ignored" not in terminal
    assert "cpu_serial" in terminal and "git_revision: 0123abcd" in terminal
    assert "git_revision: 0123abcd" in (build / "study-logs" / "cpu-baseline.log").read_text()
    assert list(temporary.iterdir()) == [] and not (tmp_path / "reports").exists()
