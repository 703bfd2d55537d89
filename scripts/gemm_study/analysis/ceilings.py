"""The ceilings of the GPU a results file was recorded on, each with the clock it assumes and
where its number comes from: compute peaks (FP32 and FP64 FMA on the CUDA cores, TF32 and FP64
on the tensor cores) and bandwidths (DRAM, L2, shared memory).

Compute peak = FLOP per SM per cycle x SMs x the maximum SM clock (the context's
gpu_max_sm_clock_mhz). The CUDA-core peaks are gemm-bench's (context peak_fp32_gflops and
peak_fp64_gflops: FMA lanes per SM x 2 x SMs x that clock, bench/device_info.cpp). The tensor-core
peaks are the context's where it records them (peak_tf32_gflops, peak_fp64_tensor_gflops), else
TENSOR_FLOP_PER_SM_CYCLE x SMs x that clock; an architecture missing from the table has no tensor
ceiling, never a guess. tensor_flop_per_pipe_cycle() measures the rate on a run's own tensor
kernels, so the table is checked by the counters of every study.

Bandwidths: DRAM from the context's peak_dram_gbs (bus width x 2 transfers x memory clock); L2
and shared memory from the counters' peak rates (CUPTI's *.peak_sustained: units per cycle of
the unit's clock, the whole chip) x bytes per unit (a 32-byte L2 sector, a shared-memory
wavefront of up to 128 bytes) x the clock (L2: lts__cycles_elapsed.avg.per_second over the
profiled launches, median; shared memory: the maximum SM clock).

DATASHEETS holds a product's published figures; datasheet_check() sets them next to the computed
ceilings with the clock each figure implies (its value over this GPU's FLOP per cycle x SMs)."""

import math
from dataclasses import dataclass

import numpy as np

from gemm_study.data.manifest import TAGS
from gemm_study.data.results import context_value, has_tag, sm_count

# Dense tensor-core FLOP per SM per cycle, by compute capability (major, minor): A100 (8.0) TF32
# 156 TFLOP/s and FP64 19.5 TFLOP/s at 1,410 MHz x 108 SMs; H100 (9.0) twice that per SM and cycle.
TENSOR_FLOP_PER_SM_CYCLE = {
    (8, 0): {"tf32": 1024, "fp64_tensor": 128},
    (9, 0): {"tf32": 2048, "fp64_tensor": 256},
}
SECTOR_BYTES = 32
WAVEFRONT_BYTES = 128

# compute ceiling -> (label, context key)
COMPUTE = {
    "fp32": ("FP32 FMA, CUDA cores", "peak_fp32_gflops"),
    "fp64": ("FP64 FMA, CUDA cores", "peak_fp64_gflops"),
    "tf32": ("TF32, tensor cores", "peak_tf32_gflops"),
    "fp64_tensor": ("FP64, tensor cores", "peak_fp64_tensor_gflops"),
}
# The ceilings that bound a precision's kernels, CUDA-core ones first.
OF_PRECISION = {"fp32": ("fp32", "tf32"), "fp64": ("fp64", "fp64_tensor")}

# Published figures (TFLOP/s, TB/s) of a product, matched by all the words in the GPU's name.
DATASHEETS = {
    ("H100", "HBM3"): ("H100 SXM datasheet", {"fp32": 67, "fp64": 34, "tf32": 495, "fp64_tensor": 67, "dram": 3.35}),
}


@dataclass(frozen=True)
class Ceiling:
    key: str
    label: str
    value: float  # GFLOP/s or GB/s
    unit: str
    clock_mhz: float  # the clock the value assumes
    source: str


def _max_clock(context):
    return context_value(context, "gpu_max_sm_clock_mhz", "sm_clock_max_mhz_nvml")


def tensor_flop_per_cycle_doc(context):
    """{'TF32': FLOP, 'FP64': FLOP} per SM per cycle of the documented dense tensor peaks of the
    context's GPU ({} for an architecture missing from the table)."""
    rates = TENSOR_FLOP_PER_SM_CYCLE.get(_compute_capability(context), {})
    return {label: rates[key] for label, key in (("TF32", "tf32"), ("FP64", "fp64_tensor")) if key in rates}


def _compute_capability(context):
    try:
        major, minor = str(context.get("gpu_compute_capability", "")).split(".")
        return int(major), int(minor)
    except ValueError:
        return None


def compute_ceiling(context, key):
    """The Ceiling of compute `key` (COMPUTE), or None when neither the context nor the table has it."""
    label, context_key = COMPUTE[key]
    clock = _max_clock(context)
    recorded = context_value(context, context_key)
    if np.isfinite(recorded):
        return Ceiling(key, label, recorded, "GFLOP/s", clock, f"context {context_key}")
    rate = TENSOR_FLOP_PER_SM_CYCLE.get(_compute_capability(context), {}).get(key)
    sms = sm_count(context)
    if rate is None or not (np.isfinite(sms) and np.isfinite(clock)):
        return None
    return Ceiling(
        key,
        label,
        rate * sms * clock / 1e3,
        "GFLOP/s",
        clock,
        f"{rate} FLOP per SM per cycle (cc {context.get('gpu_compute_capability')}) x {sms:.0f} SMs",
    )


def _chip_constant(frame, column):
    """A counter that is a property of the chip (a peak rate, a clock): its median over the rows."""
    if frame is None or column not in frame:
        return math.nan
    values = frame[column].dropna()
    values = values[values > 0]
    return float(values.median()) if len(values) else math.nan


def bandwidth_ceilings(context, frame=None):
    """{dram, l2, shared: Ceiling} for the bandwidths the context and the counters give."""
    out = {}
    dram = context_value(context, "peak_dram_gbs")
    if np.isfinite(dram):
        out["dram"] = Ceiling(
            "dram",
            "DRAM",
            dram,
            "GB/s",
            context_value(context, "gpu_memory_clock_mhz"),
            "context peak_dram_gbs (bus width x 2 x memory clock)",
        )
    l2_rate, l2_clock = _chip_constant(frame, "l2_sectors_peak_per_cycle"), _chip_constant(frame, "l2_clock_hz")
    if np.isfinite(l2_rate) and np.isfinite(l2_clock):
        out["l2"] = Ceiling(
            "l2",
            "L2",
            l2_rate * SECTOR_BYTES * l2_clock / 1e9,
            "GB/s",
            l2_clock / 1e6,
            f"{l2_rate:.0f} sectors per L2 cycle (lts__t_sectors.sum.peak_sustained) x 32 B",
        )
    smem_rate, clock = _chip_constant(frame, "smem_wavefronts_peak_per_cycle"), _max_clock(context)
    if np.isfinite(smem_rate) and np.isfinite(clock):
        out["shared"] = Ceiling(
            "shared",
            "shared memory",
            smem_rate * WAVEFRONT_BYTES * clock / 1e3,
            "GB/s",
            clock,
            f"{smem_rate:.0f} wavefronts per SM cycle "
            "(l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.peak_sustained) x 128 B",
        )
    return out


def ceilings(context, frame=None):
    """Every ceiling the context and counters give: {key: Ceiling}."""
    out = {key: c for key in COMPUTE if (c := compute_ceiling(context, key)) is not None}
    out.update(bandwidth_ceilings(context, frame))
    return out


def ceiling_key(row):
    """The compute ceiling that bounds a row: tensor-core rungs the tensor peak of their
    arithmetic; cuBLAS the fastest unit of its arithmetic (DGEMM runs on the FP64 tensor cores,
    TF32 on the tensor cores, FP32 SGEMM on the CUDA cores); everything else the CUDA cores."""
    compute = row.get("compute") if isinstance(row.get("compute"), str) and row.get("compute") else row["precision"]
    tags = row.get("tags") or ()
    if compute == "tf32":
        return "tf32"
    if compute == "fp64" and (TAGS.tensor_core in tags or TAGS.reference in tags):
        return "fp64_tensor"
    return compute


def peak_of(row, table):
    """GFLOP/s of the row's own ceiling (ceiling_key) in a ceilings() table, NaN if absent."""
    ceiling = table.get(ceiling_key(row))
    return ceiling.value if ceiling else math.nan


def datasheet_check(context, table):
    """[(label, computed value, its clock, published value, clock the published value implies)]
    for the product whose datasheet DATASHEETS has; [] for any other GPU."""
    name = context.get("gpu_name", "")
    for words, (_title, figures) in DATASHEETS.items():  # noqa: B007 - `figures` of the match, used after the loop
        if all(word in name for word in words):
            break
    else:
        return []
    rows = []
    for key, published in figures.items():
        ceiling = table.get(key)
        if ceiling is None:
            continue
        scale = 1e3  # TFLOP/s or TB/s -> GFLOP/s or GB/s
        implied = ceiling.clock_mhz * published * scale / ceiling.value
        rows.append((ceiling.label, ceiling.value, ceiling.clock_mhz, published * scale, implied))
    return rows


def datasheet_title(context):
    name = context.get("gpu_name", "")
    return next((title for words, (title, _) in DATASHEETS.items() if all(w in name for w in words)), None)


def tensor_flop_per_pipe_cycle(frame, context):
    """{family: FLOP per SM per cycle of a busy tensor pipe, median over its rows} for the tensor-core
    rows with the counters, to set against TENSOR_FLOP_PER_SM_CYCLE. tensor_pipe_cycles sums the
    busy cycles over the SMs and its peak per cycle counts what all SMs can add in one cycle, so
    cycles / (peak / SMs) is the busy time in SM cycles summed over the SMs."""
    rates = {}
    sms = sm_count(context)
    if "tensor_pipe_cycles" not in frame or "tensor_pipe_peak_per_cycle" not in frame or not np.isfinite(sms):
        return {}
    for _, row in frame[has_tag(frame, TAGS.tensor_core)].iterrows():
        cycles, per_cycle = row.get("tensor_pipe_cycles"), row.get("tensor_pipe_peak_per_cycle")
        if np.isfinite(cycles) and np.isfinite(per_cycle) and cycles > 0 and per_cycle > 0:
            busy_sm_cycles = cycles / (per_cycle / sms)
            rates.setdefault(row["family"], []).append(2.0 * row["m"] * row["n"] * row["k"] / busy_sm_cycles)
    return {family: float(np.median(values)) for family, values in rates.items()}


def markdown(context, table, frame):
    """The report's ceilings: each with its clock and source, the datasheet check, and the tensor
    rate the run's own tensor kernels delivered."""
    import pandas as pd

    from gemm_study.data.formatting import markdown_table, number

    rows = pd.DataFrame(
        [
            {"ceiling": c.label, "value": c.value, "unit": c.unit, "clock_mhz": c.clock_mhz, "source": c.source}
            for c in table.values()
        ]
    )
    lines = [
        markdown_table(
            rows,
            ["ceiling", "value", "unit", "clock_mhz", "source"],
            ["ceiling", "value", "unit", "at clock (MHz)", "from"],
        )
        if len(rows)
        else "No ceiling in these results.",
        "",
    ]
    checks = datasheet_check(context, table)
    if checks:
        lines += [
            f"Against the {datasheet_title(context)} (each published figure over this GPU's rate per "
            "cycle gives the clock it assumes):",
            "",
            "| ceiling | computed | at MHz | published (rounded) | computed / published | "
            "published figure's clock (MHz) |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {label} | {number(value)} | {number(clock)} | {number(published)} | {value / published:.3f} | "
            f"{number(implied)} |"
            for label, value, clock, published, implied in checks
        ]
        lines.append("")
    rates = tensor_flop_per_pipe_cycle(frame, context)
    if rates:
        assumed = TENSOR_FLOP_PER_SM_CYCLE.get(_compute_capability(context), {})
        lines += [
            "FLOP per SM per cycle of a busy tensor pipe, measured (2·M·N·K over tensor_pipe_cycles "
            "scaled by its peak per SM; median over a family's shapes): "
            + "; ".join(f"{family} {number(rate)}" for family, rate in rates.items())
            + ". The tensor ceilings above assume "
            + (", ".join(f"{COMPUTE[key][0]} {rate}" for key, rate in assumed.items()) or "no table rate")
            + ".",
            "",
        ]
    return lines
