"""`auto`'s model replayed without a GPU: for a shape its table does not hold, `auto` predicts every
candidate's time from the candidate's sweep times at the nearest suite shapes
(kernels/dispatch/auto_times.inc), scaled by the busiest SM's work there and here
(kernels/dispatch/shape_model.h), and its first run at the shape times the few fastest
predictions and keeps the fastest (kernels/dispatch/auto.cu, rule 2; timed_choice.h). The same
arithmetic here, on sweep JSON that holds each candidate's grid at every shape, so
that a change to the model can be judged before any GPU time is spent:

  - held out: the pick at each held-out shape, judged by the candidates' own times in an
    evaluation sweep (within 5% of the fastest, as gemm-auto-report counts it);
  - leave one out: the pick at each suite shape with that shape taken out of the references, a
    judgement on 40 more shapes per arithmetic that the held-out list cannot overfit;
  - agreement: where the sweep also ran `auto`, whether the replay picks what `auto` picked (the
    replay follows the C++; a disagreement means one of them changed).

Differences from the C++ it cannot avoid: the grids come from the sweep's launch facts
(`grid_blocks`, the same plan auto reads; the evaluation sweep times every suite shape too, so its
own grids serve as the references' by default), the tuned rung's tile from
kernels/ladder/tuned_configs.inc (auto reads it from the plan), and a candidate that did not run
at a shape is not a candidate there; and where auto times its candidates, the replay takes the
fastest of them by the evaluation sweep's median, the model's earlier rank within 2% of it as
auto keeps it (auto's own few samples may rank two candidates within their noise the other way). The times and the tuned configurations must be the ones the
judged build was compiled with: a regenerated table judges nothing recorded before it."""

import gzip
import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from gemm_study.data.names import variant_params
from gemm_study.data.paths import CHECKOUT
from gemm_study.tuning.auto_report import NEAR_BEST, collect_auto
from gemm_study.tuning.shape_table import collect

TIMES_PATH = CHECKOUT / "kernels" / "dispatch" / "auto_times.inc"
TUNED_PATH = CHECKOUT / "kernels" / "ladder" / "tuned_configs.inc"
REFERENCES = 2  # auto.cu's kModelReferences
FIXED_MS = 0.004  # shape_model.h's kFixedMs
MISALIGNED_DISTANCE = 1.0  # shape_model.h's kMisalignedDistance
TIMED_CANDIDATES = 4  # timed_choice.h's kTimedCandidates (1: the model's first prediction alone)
KEEP_MARGIN = 0.02  # timed_choice.h's kKeepMargin: a later-ranked candidate must be faster by more
ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp64": 8}
STORAGE = {"fp32": "fp32", "tf32": "fp32", "fp64": "fp64"}

TIME_LINE = re.compile(r'GEMM_AUTO_TIME\((\w+),\s*(\d+),\s*(\d+),\s*(\d+),\s*"([^"]+)",\s*([0-9.eE+-]+)\)')
TUNED_LINE = re.compile(r"LADDER_TUNED\((\w+),\s*(\d+),\s*\{([^}]*)\}\)")


@dataclass(frozen=True)
class Launch:
    grid_blocks: int
    persistent: bool


@dataclass(frozen=True)
class Pick:
    arithmetic: str
    shape: tuple
    heldout: bool
    picked: str
    picked_ms: float  # the pick's own time in the evaluation sweep
    best: str
    best_ms: float
    recorded: tuple  # what `auto` ran at the shape in each run of the sweep (empty: it did not run)
    timed: tuple = ()  # the candidates the first run times, the model's fastest predictions first

    @property
    def agrees(self):
        """Whether `auto` ran what the replay says it could in every run: the model's first
        prediction where nothing is timed, else one of the candidates timed."""
        allowed = self.timed if len(self.timed) > 1 else (self.picked,)
        return all(r in allowed for r in self.recorded)

    @property
    def near_best(self):
        return self.best_ms / self.picked_ms >= 1.0 - NEAR_BEST


def _text(path):
    """A file's text; gzipped where its name ends in .gz (a snapshot kept beside a sweep)."""
    path = Path(path)
    return gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()


def read_times(path=TIMES_PATH):
    """{(arithmetic, variant): [(shape, ms), ...]} from auto_times.inc, in the file's order (auto
    ranks a candidate's references with a stable sort of that order)."""
    out = defaultdict(list)
    for m in TIME_LINE.finditer(_text(path)):
        out[(m[1], m[5])].append(((int(m[2]), int(m[3]), int(m[4])), float(m[6])))
    return dict(out)


def read_tuned_tiles(path=TUNED_PATH):
    """{precision: [(size, (bm, bn, bk)), ...]} from tuned_configs.inc."""
    out = defaultdict(list)
    for m in TUNED_LINE.finditer(_text(path)):
        fields = dict(re.findall(r"\.(\w+)\s*=\s*(\w+)", m[3]))
        out[m[1]].append((int(m[2]), tuple(int(fields[k]) for k in ("bm", "bn", "bk"))))
    return dict(out)


def name_param(name, key):
    """The parameter `key` of a variant name as shape_model.h's name_param reads it: a whole
    number, else 0."""
    value = variant_params(name)[1].get(key, "")
    return int(value) if value.isdigit() else 0


def tile_of(name, shape, precision, tuned):
    """(bm, bn, bk) the model counts: the name's, for `tuned` the configuration it runs at the
    shape (the size whose cube is nearest M*N*K in log scale, as kernels/ladder/tuned.cu picks);
    (0, 0, 1) for a kernel without a block tile."""
    if name == "tuned" and tuned.get(precision):
        log_work = math.log(max(1.0, math.prod(shape)))
        return min(tuned[precision], key=lambda e: abs(3 * math.log(e[0]) - log_work))[1]
    return name_param(name, "bm"), name_param(name, "bn"), max(1, name_param(name, "bk"))


def busiest_sm_work(tile, shape, launch, sms):
    """shape_model.h's busiest_sm_work."""
    (bm, bn, bk), (m, n, k) = tile, shape
    grid = launch.grid_blocks
    if sms <= 0 or grid <= 0:
        return 0.0
    on_busiest = math.ceil(grid / sms)
    if bm <= 0 or bn <= 0:
        return on_busiest * m * n * (k + 1) / grid
    tiles = math.ceil(m / bm) * math.ceil(n / bn)
    tile_work = bm * bn * (math.ceil(k / bk) + 1) * bk
    if launch.persistent:
        return on_busiest * math.ceil(tiles / grid) * tile_work
    return on_busiest * tiles * tile_work / grid


def scaled_ms(ms, work_there, work_here):
    if work_there <= 0:
        return ms
    fixed = min(ms, FIXED_MS)
    return fixed + (ms - fixed) * work_here / work_there


def shape_distance(a, b):
    return sum(abs(math.log(x / y)) for x, y in zip(a, b))


def rows_aligned(shape, element_bytes):
    _, n, k = shape
    return (n * element_bytes) % 16 == 0 and (k * element_bytes) % 16 == 0


def reference_distance(shape, ref, element_bytes, misaligned=MISALIGNED_DISTANCE):
    """shape_model.h's reference_distance."""
    same = rows_aligned(shape, element_bytes) == rows_aligned(ref, element_bytes)
    return shape_distance(shape, ref) + (0.0 if same else misaligned)


def reference_rank(shape, ref, element_bytes, misaligned=MISALIGNED_DISTANCE):
    """The key auto sorts a candidate's references by: reference_distance; with `misaligned` =
    inf the rule before it, every shape of the other alignment after every shape of the same
    one, each group nearest first."""
    if math.isinf(misaligned):
        other = rows_aligned(shape, element_bytes) != rows_aligned(ref, element_bytes)
        return (other, shape_distance(shape, ref))
    return (False, reference_distance(shape, ref, element_bytes, misaligned))


def shape_kind(shape):
    m, n, _ = shape
    return 0 if m <= 16 else 1 if n <= 16 else 2


def _whole(x):
    """x as an int >= 1, or None (a count the JSON gives as a float, or nonsense)."""
    return int(x) if isinstance(x, (int, float)) and math.isfinite(x) and x >= 1 and x == int(x) else None


def valid_shape(variant):
    """The variant's (m, n, k), or None where it is not three whole numbers >= 1."""
    shape = variant.get("shape") if isinstance(variant, dict) else None
    if not isinstance(shape, dict):
        return None
    dims = tuple(_whole(shape.get(k)) for k in ("m", "n", "k"))
    return dims if None not in dims else None


def usable(benchmarks):
    """The entries of a sweep with a variant and a valid shape (others say nothing here)."""
    return [b for b in benchmarks if isinstance(b, dict) and valid_shape(b.get("variant"))]


def launches(benchmarks):
    """{(precision, variant, shape): Launch} from the sweep's launch facts."""
    out = {}
    for b in usable(benchmarks):
        v = b["variant"]
        grid = _whole(b.get("grid_blocks"))
        if grid:
            out[(v.get("precision"), v.get("name"), valid_shape(v))] = Launch(grid, bool(v.get("persistent_grid")))
    return out


@dataclass
class Model:
    """The model's inputs: the suite's times and the launches at the suite's and the judged shapes."""

    times: dict  # read_times()
    reference_launches: dict  # launches() of the sweep that wrote auto_times.inc
    launches: dict  # launches() of the evaluation sweep
    sms: int
    tuned: dict  # read_tuned_tiles()
    misaligned: float = MISALIGNED_DISTANCE

    def predict(self, arith, shape, name, leave_out=None):
        """The predicted ms of candidate `name` at `shape`, or None where the model has no
        reference of the shape's kind or a launch it needs is missing."""
        explained = self.explain(arith, shape, name, leave_out)
        return explained[0] if explained else None

    def explain(self, arith, shape, name, leave_out=None):
        """(predicted ms, [reference shapes]) as auto's rule text gives them, or None."""
        precision = STORAGE[arith]
        here = self.launches.get((precision, name, shape))
        entries = [
            (s, ms)
            for s, ms in self.times.get((arith, name), [])
            if shape_kind(s) == shape_kind(shape) and s != leave_out
        ]
        if here is None or not entries:
            return None
        size = ELEMENT_BYTES[arith]
        entries.sort(key=lambda e: reference_rank(shape, e[0], size, self.misaligned))
        tile = tile_of(name, shape, precision, self.tuned)
        work_here = busiest_sm_work(tile, shape, here, self.sms)
        predictions = []
        for ref, ms in entries[:REFERENCES]:
            there = self.reference_launches.get((precision, name, ref))
            if there is None:
                return None
            ref_tile = tile_of(name, ref, precision, self.tuned)
            predictions.append(scaled_ms(ms, busiest_sm_work(ref_tile, ref, there, self.sms), work_here))
        return sum(predictions) / len(predictions), [ref for ref, _ in entries[:REFERENCES]]


def replay(model, benchmarks, heldout, timed=1):
    """A Pick per (arithmetic, shape) of the evaluation sweep where the model predicts a candidate:
    held-out shapes with every reference, suite shapes with their own left out. `timed`: how many
    of the fastest predictions the first run times (1: the first prediction runs, as auto did
    before it timed)."""
    benchmarks = usable(benchmarks)
    times, _ = collect(benchmarks)
    recorded = {
        key: tuple(str(choice.get("variant", "")) for _, choice, *_ in runs)
        for key, runs in collect_auto(benchmarks).items()
    }
    picks = []
    for (arith, shape), candidates in sorted(times.items()):
        if arith not in ELEMENT_BYTES:
            continue
        measured = {name: statistics.median(ms) for name, ms in candidates.items()}
        held = shape in heldout
        predicted = {}
        for name in measured:
            p = model.predict(arith, shape, name, leave_out=None if held else shape)
            if p is not None:
                predicted[name] = p
        if not predicted:
            continue
        ranked = sorted(sorted(predicted), key=predicted.get)  # a tie: the first by name, as auto's map
        to_time = tuple(ranked[: max(1, timed)])
        fastest = min(measured[n] for n in to_time)
        # The earliest in the model's order within the margin of the fastest, as auto keeps it.
        picked = next(n for n in to_time if measured[n] <= fastest * (1 + KEEP_MARGIN))
        best = min(measured, key=measured.get)
        picks.append(
            Pick(
                arith,
                shape,
                held,
                picked,
                measured[picked],
                best,
                measured[best],
                recorded.get((arith, shape), ()),
                to_time,
            )
        )
    return picks


def tally(picks):
    """{(arithmetic, 'held out' | 'left out'): (shapes, picks within 5% of the fastest)}."""
    out = defaultdict(lambda: [0, 0])
    for p in picks:
        cell = out[(p.arithmetic, "held out" if p.heldout else "left out")]
        cell[0] += 1
        cell[1] += p.near_best
    return {k: tuple(v) for k, v in out.items()}
