"""The CPU parts of the recorded history (scripts/record_history.sh): where the spin goes in a
kernel, that it comes out again, and its calibration from a baseline run's cycles."""

import json
import shutil

import pytest
from conftest import SCRIPTS, require
from test_compare import write_run

from gemm_study.cli.inject import main as inject_main
from gemm_study.data.errors import InputError
from gemm_study.regression import inject

ROOT = SCRIPTS.parent
KERNEL = """#include "x.h"
template <typename T, int BM>
__global__ void __launch_bounds__(BM * 2, (BM > 64) ? 1 : 2)
toy_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  const int row = blockIdx.y;
  if (row >= M) return;
}
void add_toy_variants() { int braces_after = 0; { braces_after++; } }
"""


def toy_tree(tmp_path, families=("toy",)):
    for family in families:
        path = tmp_path / "kernels" / "ladder" / f"{family}.cu"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(KERNEL)
    return tmp_path


def test_the_spin_opens_the_kernel_body_and_comes_out_again(tmp_path):
    tree = toy_tree(tmp_path)
    path = inject.apply(tree, "toy", 1234)
    text = path.read_text()
    body = text.index("toy_kernel(const T* A, const T* B, T* C, int M, int N, int K) {") + len(
        "toy_kernel(const T* A, const T* B, T* C, int M, int N, int K) {"
    )
    assert text[body:].startswith("\n  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {")
    assert "clock64() - spin_start < 1234LL" in text and text.count(inject.MARK) == 1
    assert text.index(inject.MARK) < text.index("const int row")
    with pytest.raises(InputError, match="already slowed down"):
        inject.apply(tree, "toy", 1)
    assert inject.remove(tree) == [path] and path.read_text() == KERNEL


def test_a_restored_file_is_newer_than_what_was_built_from_the_spin(tmp_path):
    """A build after the removal must see the file as changed: the backup kept the original's old
    time, older than the objects compiled with the spin."""
    import os
    import time

    tree = toy_tree(tmp_path)
    original = inject.kernel_file(tree, "toy")
    os.utime(original, (1_000_000, 1_000_000))  # an old checkout
    path = inject.apply(tree, "toy", 1234)
    built = time.time()  # the objects with the spin
    inject.remove(tree)
    assert path.stat().st_mtime >= built - 1


@pytest.mark.parametrize("family", ["warptile", "blocktile_2d", "blocktile_1d"])
def test_the_default_targets_have_their_own_kernel_and_take_the_spin(tmp_path, family):
    """The recording script's first choices, on copies of this tree's files."""
    source = next((ROOT / "kernels").glob(f"*/{family}.cu"))
    copy = tmp_path / "kernels" / source.parent.name / source.name
    copy.parent.mkdir(parents=True)
    shutil.copy(source, copy)
    text = inject.apply(tmp_path, family, 100).read_text()
    head = text[: text.index("\n  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)")]
    assert head.rstrip().endswith("{") and head.count("__global__") == 1
    assert head[head.rindex("__global__") :].count("(") == head[head.rindex("__global__") :].count(")")


def test_a_family_without_its_own_single_kernel_is_refused(tmp_path):
    tree = toy_tree(tmp_path)
    (tree / "kernels" / "ladder" / "two.cu").write_text(KERNEL + KERNEL)
    with pytest.raises(InputError, match="2 __global__ functions"):
        inject.kernel_file(tree, "two")
    with pytest.raises(InputError, match="expected one kernels/\\*/absent.cu"):
        inject.kernel_file(tree, "absent")


def baseline(tmp_path, kcycles=1000.0, grid=(8, 8, 1), threads=256, occupancy=50.0):
    name = "gemm/fp32/toy/bm:64/m:1024/n:1024/k:1024"
    path = write_run(
        tmp_path / "base.json",
        {
            name: {
                "times": [kcycles / 2000.0] * 10,
                "clocks": [2000.0] * 10,
                "counters": {"theoretical_occupancy": occupancy},
            }
        },
        context={"gpu_sm_count": "4", "gpu_max_threads_per_sm": "2048"},
    )
    data = json.loads(path.read_text())
    for entry in data["benchmarks"]:
        entry["variant"] = {
            "name": "toy/bm:64",
            "family": "toy",
            "precision": "fp32",
            "params": {"bm": 64},
            "tags": ["ladder", "tracked"],
            "grid": list(grid),
            "threads_per_block": threads,
        }
    path.write_text(json.dumps(data))
    return path


def test_calibration_spreads_the_share_of_cycles_over_the_waves(tmp_path):
    """64 blocks of 256 threads, 50% of 2048 threads per SM = 4 blocks per SM, 4 SMs: 4 waves;
    2% of 1e6 cycles is 20,000 cycles, 5,000 per wave."""
    name, cycles, kcycles, waves = inject.calibrate(baseline(tmp_path), "toy", 0.02)
    assert (name, kcycles, waves, cycles) == ("gemm/fp32/toy/bm:64/m:1024/n:1024/k:1024/manual_time", 1000.0, 4, 5000)


def test_the_plan_command_prints_each_target(tmp_path, capsys):
    tree = toy_tree(tmp_path / "tree")
    assert inject_main(["plan", "--tree", str(tree), "--baseline", str(baseline(tmp_path)), "toy=0.05"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["toy"]["spin_cycles"] == 12500 and plan["toy"]["waves"] == 4
    assert (
        inject_main(["apply", "--tree", str(tree), "toy=12500"]) == 0
        and "12500LL" in (tree / "kernels" / "ladder" / "toy.cu").read_text()
    )
    assert inject_main(["remove", "--tree", str(tree)]) == 0
    assert (tree / "kernels" / "ladder" / "toy.cu").read_text() == KERNEL


def test_calibration_needs_a_clocked_fp32_run_of_the_family(tmp_path):
    with pytest.raises(InputError, match="no FP32 run of other with clocks"):
        inject.calibrate(baseline(tmp_path), "other", 0.02)


FAKE_CMAKE = r"""#!/bin/sh
# configure: -S TREE -B BUILD ...: leaves a gemm-bench that reads the tree's kernels
if [ "$1" = -S ]; then
  mkdir -p "$4/bench"
  sed "s|TREE|$2|" "FAKE_BENCH" >"$4/bench/gemm-bench"
  chmod +x "$4/bench/gemm-bench"
fi
exit 0
"""
FAKE_BENCH = r'''#!/usr/bin/env python3
"""A stand-in for gemm-bench: per family, 1e6 cycles per launch on 4 waves of blocks, plus the
spin the tree's kernel file carries (per block, per wave), 0.2% noise, a 1980 MHz clock."""
import glob, json, random, re, sys
args = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
pattern = re.compile(args["--benchmark_filter"])
random.seed(len(glob.glob(args["--benchmark_out"].rsplit("/", 1)[0] + "/*")))
rows = []
for family in ("warptile", "blocktile_2d", "blocktile_1d", "vectorized", "tuned"):
    name = f"gemm/fp32/{family}/bm:128/m:1024/n:1024/k:1024"
    if not pattern.search(name):
        continue
    spin = 0
    for path in glob.glob(f"TREE/kernels/*/{family}.cu"):
        found = re.search(r"spin_start < (\d+)LL", open(path).read())
        spin = int(found.group(1)) if found else 0
    kcycles = 1000.0 + 4 * spin / 1000.0
    for rep in range(int(args["--benchmark_repetitions"])):
        ms = kcycles / 1980.0 * (1 + random.gauss(0, 0.002))
        rows.append({"name": name + "/manual_time", "run_name": name + "/manual_time", "run_type": "iteration",
                     "repetition_index": rep, "time_unit": "ms", "real_time": ms, "median_ms": ms,
                     "gflops": 2.0 * 1024 ** 3 / ms / 1e6, "sm_clock_mhz": 1980.0, "theoretical_occupancy": 50.0,
                     "variant": {"name": f"{family}/bm:128", "family": family, "precision": "fp32",
                                 "params": {"bm": 128}, "tags": ["ladder", "tracked"], "grid": [8, 8, 1],
                                 "threads_per_block": 256}})
context = {"gpu_name": "Fake GPU", "gpu_slug": "fake", "git_revision": "build", "gpu_sm_count": "4",
           "gpu_max_threads_per_sm": "2048", "date": "2026-01-01T00:00:%02d+00:00" % len(glob.glob(
               args["--benchmark_out"].rsplit("/", 1)[0] + "/*"))}
json.dump({"context": context, "benchmarks": rows}, open(args["--benchmark_out"], "w"))
'''


def test_the_recording_script_end_to_end_with_a_stand_in_for_the_gpu(tmp_path):
    require("otava", "apache-otava")
    """record_history.sh with a fake cmake and a gemm-bench whose cycles follow the spins in the
    tree: seven runs, the spins calibrated to 2%, 5% and 10%, found at r2, r3, r4 and recovered at
    r5, nothing else; the tree is left untouched and no temporary folder remains."""
    import os
    import subprocess

    fakes = tmp_path / "fakes"
    fakes.mkdir()
    (fakes / "bench.py").write_text(FAKE_BENCH)
    cmake = fakes / "cmake"
    cmake.write_text(FAKE_CMAKE.replace("FAKE_BENCH", str(fakes / "bench.py")))
    cmake.chmod(0o755)
    smi = fakes / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'GPU 0: Fake GPU'\n")
    smi.chmod(0o755)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env = dict(
        os.environ,
        PATH=f"{fakes}:{os.environ['PATH']}",
        TMPDIR=str(temporary),
        RECORD_FAMILIES="warptile|blocktile_2d|blocktile_1d|vectorized|tuned",
    )
    proc = subprocess.run(
        [str(SCRIPTS / "record_history.sh"), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    runs = sorted(p.name for p in (tmp_path / "out" / "runs").iterdir())
    assert len(runs) == 7 and runs[2].endswith("+slow-warptile.json")
    plan = json.loads((tmp_path / "out" / "injections.json").read_text())
    assert [plan[f]["spin_cycles"] for f in ("warptile", "blocktile_2d", "blocktile_1d")] == pytest.approx(
        [5000, 12500, 25000], rel=0.01
    )  # 2%, 5%, 10% of 1e6 cycles over 4 waves
    history = json.loads((tmp_path / "out" / "history" / "history.json").read_text())
    found = sorted((e["family"], e["first_index"], e["recovered"] is not None) for e in history["regressions"])
    assert found == [("blocktile_1d", 4, True), ("blocktile_2d", 3, True), ("warptile", 2, True)]
    steps = {name.split("/")[2]: [s["revision"] for s in series["steps"]] for name, series in history["series"].items()}
    assert steps == {"warptile": [2, 5], "blocktile_2d": [3, 5], "blocktile_1d": [4, 5], "vectorized": [], "tuned": []}
    assert (tmp_path / "out" / "dashboard.html").stat().st_size > 5000
    assert (
        list(temporary.iterdir()) == []
        and "spin_start" not in (ROOT / "kernels" / "ladder" / "warptile.cu").read_text()
    )
