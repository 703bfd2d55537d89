"""A synthetic study in gemm-bench's current format (per-sample clocks, the account's counters,
launch facts), built backwards from what each row should show: its GFLOP/s, its limiter, the share
of its time the limiter explains (explained) and the grid's tail. Every manifest rung family gets
a row, so tests can hold the report to the manifest; counts follow from the H100's peak rates below,
so a test knows each row's account before the report computes it."""

import json

from gemm_study.data.manifest import load_families

SHAPE = (1024, 1024, 1024)
SM_CLOCK_MHZ = 1980.0
L2_CLOCK_HZ = 1.755e9
DRAM_CLOCK_HZ = 2.619e9
# Peak per cycle of each unit's counter (the chip's, as CUPTI's .peak_sustained gives them).
PEAKS = {
    "fma_pipe_peak_per_cycle": 528.0,
    "fp64_pipe_peak_per_cycle": 264.0,
    "tensor_pipe_peak_per_cycle": 132.0,
    "issue_peak_per_cycle": 528.0,
    "smem_wavefronts_peak_per_cycle": 132.0,
    "l1_wavefronts_peak_per_cycle": 132.0,
    "l2_sectors_peak_per_cycle": 96.0,
    "dram_bytes_peak_per_cycle": 1280.0,
}
# unit -> (work counter, its peak, clock in Hz, SM domain)
UNITS = {
    "fma": ("fma_pipe_inst", "fma_pipe_peak_per_cycle", SM_CLOCK_MHZ * 1e6, True),
    "fp64": ("fp64_pipe_inst", "fp64_pipe_peak_per_cycle", SM_CLOCK_MHZ * 1e6, True),
    "tensor": ("tensor_pipe_cycles", "tensor_pipe_peak_per_cycle", SM_CLOCK_MHZ * 1e6, True),
    "issue": ("warp_inst", "issue_peak_per_cycle", SM_CLOCK_MHZ * 1e6, True),
    "shared": ("smem_wavefronts", "smem_wavefronts_peak_per_cycle", SM_CLOCK_MHZ * 1e6, True),
    "l1": ("l1_wavefronts", "l1_wavefronts_peak_per_cycle", SM_CLOCK_MHZ * 1e6, True),
    "l2": ("l2_sectors", "l2_sectors_peak_per_cycle", L2_CLOCK_HZ, False),
    "dram": ("dram_read_bytes", "dram_bytes_peak_per_cycle", DRAM_CLOCK_HZ, False),
}
OTHER_SHARE = 0.1  # every other unit's time at peak over the measured time

CONTEXT = {
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "gpu_slug": "h100-80gb-hbm3",
    "gpu_compute_capability": "9.0",
    "gpu_sm_count": "132",
    "gpu_max_sm_clock_mhz": "1980",
    "gpu_max_threads_per_sm": "2048",
    "gpu_l2_bytes": "52428800",
    "gpu_memory_clock_mhz": "2619",
    "peak_fp32_gflops": "66908.160000",
    "peak_fp64_gflops": "33454.080000",
    "peak_dram_gbs": "3352.320000",
    "l2_state": "warm",
    "timing": "kernel only",
    "counters": "collected",
    "git_revision": "synthetic",
    "cuda_driver_version": "13.0",
    "cuda_runtime_version": "13.0",
    "date": "2026-11-24T00:00:00+00:00",
    "skipped": json.dumps(
        [{"benchmark": "gemm/fp32/wgmma_tma/m:1000/n:1000/k:1000", "reason": "wgmma_tma: K % 4 != 0"}]
    ),
}

# Rows of the FP32 CUDA-core ladder: (GFLOP/s, limiter, explained). warptile loses time without
# its limiter's work growing (explained falls): an unexplained step, and so is the next one.
FP32_LADDER = [
    (9000, "shared", 0.8),
    (16000, "shared", 0.8),
    (21000, "shared", 0.8),
    (34000, "issue", 0.8),
    (37500, "issue", 0.8),
    (35500, "fma", 0.6),
    (47000, "fma", 0.8),
    (47200, "fma", 0.8),
    (44900, "fma", 0.8),
    (49100, "fma", 0.8),
]


def counters(gflops, limiter, explained, tail=1.0, shape=SHAPE):
    """The account's counters of a row whose limiter explains `explained` of its time."""
    m, n, k = shape
    seconds = 2.0 * m * n * k / (gflops * 1e9)
    out = dict(
        PEAKS,
        sm_clock_mhz=SM_CLOCK_MHZ,
        l2_clock_hz=L2_CLOCK_HZ,
        dram_clock_hz=DRAM_CLOCK_HZ,
        dram_write_bytes=0.0,
        sm_active_cycles_avg=1e6,
        sm_active_cycles_max=1e6 * tail,
        counters_available=1.0,
    )
    for unit, (work, peak, clock, sm_domain) in UNITS.items():
        share = explained if unit == limiter else OTHER_SHARE
        out[work] = share * seconds * PEAKS[peak] * clock / (tail if sm_domain else 1.0)
    if limiter != "l1":  # the L1 data stage's wavefronts include the shared-memory ones
        out["l1_wavefronts"] = out["smem_wavefronts"]
    return out


def entry(precision, variant, gflops, tags, compute=None, shape=SHAPE, counts=None, end_to_end=False, **facts):
    """One benchmark entry of the kernel contract."""
    m, n, k = shape
    kind = "gemm_e2e" if end_to_end else "gemm"
    name = f"{kind}/{precision}/{variant}/m:{m}/n:{n}/k:{k}/manual_time"
    ms = 2.0 * m * n * k / gflops / 1e6
    family, _, params = variant.partition("/")
    out = {
        "name": name,
        "run_name": name,
        "run_type": "iteration",
        "repetition_index": 0,
        "repetitions": 1,
        "iterations": 10,
        "real_time": ms,
        "time_unit": "ms",
        "median_ms": ms,
        "gflops": gflops,
        "samples": {"ms": [ms] * 3, "sm_clock_mhz": [SM_CLOCK_MHZ] * 3, "flagged": [0, 0, 0], "slowdown": []},
        "sustained": 0.0,
    }
    out.update(counts or {"counters_available": 0.0})
    param_values = {p.split(":")[0]: int(p.split(":")[1].split("x")[0]) for p in params.split("/") if ":" in p}
    out["variant"] = {
        "name": variant,
        "family": family,
        "precision": precision,
        "compute": compute or precision,
        "backend": "cublas" if family.startswith("cublas") else "cuda_kernel",
        "params": param_values,
        "tags": list(tags),
        "end_to_end": end_to_end,
        "shape": {"m": m, "n": n, "k": k},
        **facts,
    }
    return out


def tensor_ladder(family):
    """(precision, compute) of a tensor-core family: FP64 where its name says so, else TF32."""
    return ("fp64", "fp64") if "fp64" in family else ("fp32", "tf32")


def study(extra=(), drop_families=()):
    """Entries of the synthetic study at SHAPE: every manifest rung, the start, the libraries."""
    entries = []
    ladder_families = [f for f in load_families() if f.level == "ladder" and f.family not in drop_families]
    tensor_families = [f for f in load_families() if f.level == "tensor_core" and f.family not in drop_families]
    start = FP32_LADDER[0]
    for precision in ("fp32", "fp64"):
        scale = 1.0 if precision == "fp32" else 0.5
        entries.append(
            entry(
                precision,
                "shared/tile:32",
                start[0] * scale,
                ("seed", "tile_sweep"),
                counts=counters(start[0] * scale, start[1], start[2]),
                threads_per_block=1024,
            )
        )
        for family, (gflops, limiter, explained) in zip(ladder_families, FP32_LADDER[1:]):
            limiter = "fp64" if precision == "fp64" and limiter == "fma" else limiter
            entries.append(
                entry(
                    precision,
                    f"{family.family}/bm:128/bn:128",
                    gflops * scale,
                    ("ladder", "summary"),
                    counts=counters(gflops * scale, limiter, explained),
                    grid_blocks=64.0,
                    threads_per_block=256,
                )
            )
    tensor_speed = {"fp32": [46000, 131000, 326000, 325000], "fp64": [25000, 48800]}
    for precision in ("fp32", "fp64"):
        mine = [f for f in tensor_families if tensor_ladder(f.family)[0] == precision]
        for family, gflops in zip(mine, tensor_speed[precision]):
            _, compute = tensor_ladder(family.family)
            entries.append(
                entry(
                    precision,
                    f"{family.family}/bm:128/bn:128",
                    gflops,
                    ("tensor_core", "summary"),
                    compute=compute,
                    counts=counters(gflops, "tensor", 0.75),
                )
            )
    for precision, variant, gflops, compute in (
        ("fp32", "cublas", 51500, "fp32"),
        ("fp32", "cublaslt", 52500, "fp32"),
        ("fp32", "cublas_tf32", 345000, "tf32"),
        ("fp64", "cublas", 58600, "fp64"),
    ):
        entries.append(
            entry(
                precision,
                variant,
                gflops,
                ("reference",),
                compute=compute,
                counts=counters(gflops, "tensor" if compute != "fp32" else "fma", 0.9),
            )
        )
    return entries + list(extra)


def write(path, entries=None, context=None):
    data = {"context": dict(CONTEXT, **(context or {})), "benchmarks": study() if entries is None else entries}
    path.write_text(json.dumps(data))
    return path
