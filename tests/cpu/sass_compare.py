#!/usr/bin/env python3
"""The machine code of every kernel the study runs, in two revisions, side by side.

  sass_compare.py collect BUILD [--label NAME] [--out DATA.json]   what one build's variants launch
  sass_compare.py report BEFORE.json AFTER.json [--out FILE.md]

`collect` reads a configured and built tree of this project (its kernel library,
kernels/libgemm_kernels.a): variant_kernels.cpp (next to this script), compiled against that
tree's headers and library, names for every variant of the registry (sweep instances included)
and every configuration of the tuned rung the kernel its plan launches at three shapes (whole
tiles, tails with 16-byte rows, any shape), and the variant's facts; cuobjdump gives the kernels'
SASS. ptxas output depends on the source file's path, so compare builds made at the same path
(sass_before_after.sh builds two revisions there, one after the other).

`report` matches variants by precision and name (a kernel's name may differ between revisions).
Per kernel: the instructions (NOPs and never-issued padding, @!PT, left out) and its main loop: of the loops (a backward branch
and what lies between its target and it), the one with the most math instructions (FFMA, DFMA,
HMMA, DMMA, HGMMA), the innermost where several tie; its length and opcode histogram. The
Markdown report lists the facts that differ, one row per kernel pair, and the histogram change of
every main loop that changed. Exit status 0, 2 when a build or a file cannot be read.
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import sass_test  # the same reading of cuobjdump's output

# The study's reading of a main loop, so that this report and the study's step sentences agree:
# run this with the project's Python (scripts/bootstrap's .venv), where gemm_study is installed.
from gemm_study.analysis.sass_loop import cuobjdump_instructions, issued, main_loop

HERE = Path(__file__).resolve().parent


class BuildError(Exception):
    pass


def cache_value(build, key):
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(key + ":"):
            return line.split("=", 1)[1]
    return None


def compile_tool(build, work):
    """variant-kernels built against `build`'s source headers and kernel library."""
    if not (build / "CMakeCache.txt").is_file():
        raise BuildError(f"{build}: no CMakeCache.txt (not a configured build directory)")
    library = build / "kernels" / "libgemm_kernels.a"
    if not library.is_file():
        raise BuildError(f"{library}: missing (build the gemm_kernels target first)")
    source = Path(cache_value(build, "CMAKE_HOME_DIRECTORY"))
    # The toolkit's headers and libraries where the build found them: the compiler's folder
    # (CMAKE_CUDA_COMPILER is <toolkit>/bin/nvcc) and the CUDA runtime library CMake located.
    nvcc = cache_value(build, "CMAKE_CUDA_COMPILER")
    cuda_include = str(Path(nvcc).resolve().parent.parent / "include") if nvcc else "/usr/local/cuda/include"
    cudart = cache_value(build, "CUDA_CUDART")
    cuda_lib = (
        cache_value(build, "CUDAToolkit_LIBRARY_DIR")
        or (str(Path(cudart).resolve().parent) if cudart else None)
        or "/usr/local/cuda/lib64"
    )
    exe = work / "variant-kernels"
    command = [
        "c++",
        "-std=c++20",
        "-O1",
        "-no-pie",
        "-I",
        str(source / "kernels"),
        "-isystem",
        cuda_include,
        str(HERE / "variant_kernels.cpp"),
        str(library),
        "-L",
        cuda_lib,
        f"-Wl,-rpath,{cuda_lib}",
        "-lcublasLt",
        "-lcublas",
        "-lcudart",
        "-lpthread",
        "-ldl",
        "-lrt",
        "-o",
        str(exe),
    ]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise BuildError(f"{build}: cannot build variant-kernels:\n{run.stderr[-3000:]}")
    return exe


def demangle(names):
    run = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return run.stdout.splitlines()


def canonical(demangled):
    """A kernel name as both compilers spell it: the host compiler leaves out the trailing zero
    members of a class-type template argument that the device compiler writes."""
    previous = None
    while previous != demangled:
        previous = demangled
        demangled = re.sub(r",\s*(?:0|false|\(\w[\w:]*\)0)\}", "}", demangled)
    return demangled.replace("(anonymous namespace)::", "")


def symbols(exe):
    """{address: canonical demangled name} of the program's functions."""
    run = subprocess.run(["nm", "--defined-only", str(exe)], capture_output=True, text=True, check=True)
    rows = [line.split() for line in run.stdout.splitlines()]
    rows = [(int(r[0], 16), r[2]) for r in rows if len(r) == 3 and r[1] in "tTwW"]
    names = demangle([name for _, name in rows])
    return {address: canonical(name) for (address, _), name in zip(rows, names)}


def sass(cuobjdump, exe):
    """{canonical demangled kernel name: [(address, instruction text, stall count)]}."""
    os.environ.setdefault("NVDISASM_PATH", str(Path(cuobjdump).resolve().parent))
    kernels = {name: cuobjdump_instructions(lines) for name, lines in sass_test.kernels_of(cuobjdump, str(exe)).items()}
    if not kernels:
        raise BuildError(f"cuobjdump -sass {exe} found no kernels")
    names = list(kernels)
    # Every translation unit has its own copy of a template instance: the first is kept.
    out = {}
    for mangled, name in zip(names, demangle(names)):
        out.setdefault(canonical(name), kernels[mangled])
    return out


def collect(build, cuobjdump, work):
    """{"facts": {variant: [fields]}, "kernels": {variant: {shape: kernel name}},
    "sass": {kernel name: [[address, instruction], ...]}, "stalls": {kernel name: [stall count,
    ...]}} of one build; a kernel's stall counts, one per instruction of its "sass" list, are
    there only where every instruction had its control word."""
    exe = compile_tool(build, work)
    run = subprocess.run([str(exe)], capture_output=True, text=True)
    if run.returncode != 0:
        raise BuildError(f"{exe} failed: {run.stderr.strip()[:500]}")
    facts, launches = {}, collections.defaultdict(dict)
    for line in run.stdout.splitlines():
        fields = line.split("\t")
        if fields[0] == "FACT":
            facts[fields[1]] = fields[2:]
        elif fields[0] == "KERNEL":
            launches[fields[1]][fields[2]] = int(fields[3], 16)
    names = symbols(exe)
    code = sass(cuobjdump, exe)
    kernels, used = {}, {}
    for variant, by_shape in launches.items():
        for shape, address in by_shape.items():
            name = names.get(address)
            if name is None or name not in code:
                raise BuildError(f"{build}: {variant} at {shape}: no SASS for the kernel at {address:#x} ({name})")
            kernels.setdefault(variant, {})[shape] = name
            used[name] = code[name]
    sass_lists = {name: [[a, t] for a, t, _ in ins] for name, ins in used.items()}
    stalls = {name: [s for _, _, s in ins] for name, ins in used.items() if all(s is not None for _, _, s in ins)}
    return {"build": str(build), "facts": facts, "kernels": kernels, "sass": sass_lists, "stalls": stalls}


def load(path):
    try:
        data = json.loads(Path(path).read_text())
        if not all(k in data for k in ("facts", "kernels", "sass")):
            raise ValueError("not the output of sass_compare.py collect")
        return data
    except (OSError, ValueError) as e:
        raise BuildError(f"{path}: {e}") from None


FACT_FIELDS = ("backend", "compute", "rung", "rung name", "origin", "note", "tags", "outputs per thread", "params")


ROLES = {"0": "none", "1": "representative", "2": "sweep"}  # kernels/variant.h's Role


def short(name, width=110):
    """A kernel's name for a table: no parameter list, namespaces or 'void'."""
    name = re.sub(r"\((?:float|double) const\*.*\)$", "", name)
    name = re.sub(r"\b(?:gemm|tensor|ladder)::", "", name).removeprefix("void ")
    name = re.sub(r"\(Role\)(\d)", lambda m: ROLES.get(m.group(1), m.group(1)), name)
    return name if len(name) <= width else name[: width - 1] + "…"


def report(before, after, command):
    facts_b, facts_a = before["facts"], after["facts"]
    lines = [f"Command: `{command}`", "", f"Before: {before['build']}; after: {after['build']}.", ""]
    only_b, only_a = sorted(set(facts_b) - set(facts_a)), sorted(set(facts_a) - set(facts_b))
    lines += [
        "## Variants and facts",
        "",
        f"{len(facts_b)} variants before, {len(facts_a)} after; only before: "
        f"{', '.join(only_b) or 'none'}; only after: {', '.join(only_a) or 'none'}.",
        "",
    ]
    changed = []
    for v in sorted(set(facts_b) & set(facts_a)):
        for field, b, a in zip(FACT_FIELDS, facts_b[v], facts_a[v]):
            if b != a:
                changed.append((field, b, a, v))
    if changed:
        groups = collections.defaultdict(list)
        for field, b, a, v in changed:
            groups[(field, b, a)].append(v)
        lines += ["| fact | before | after | variants |", "|---|---|---|---|"]
        for (field, b, a), vs in sorted(groups.items()):
            lines.append(f"| {field} | {b} | {a} | {len(vs)}: {', '.join(vs[:3])}{' …' if len(vs) > 3 else ''} |")
    else:
        lines.append("Every fact of every variant is the same.")
    lines.append("")

    pairs = collections.OrderedDict()
    kernels_b, kernels_a = before["kernels"], after["kernels"]
    for v in sorted(set(kernels_b) & set(kernels_a)):
        for shape in kernels_b[v]:
            nb, na = kernels_b[v][shape], kernels_a[v][shape]
            pair = pairs.setdefault((nb, na), {"variants": [], "b": before["sass"][nb], "a": after["sass"][na]})
            pair["variants"].append(f"{v} @ {shape}")
    longer = []
    lines += [
        "## Kernels",
        "",
        "One row per pair of kernels (before, after) that the same variant launches at the "
        "same shape; instructions without NOPs and @!PT padding; the main loop as described in "
        "tests/cpu/sass_compare.py.",
        "",
        "| kernel (after) | launched by | instructions before | after | main loop before | after | change |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    details = []
    for (nb, na), pair in pairs.items():
        total_b = sum(1 for _, t in pair["b"] if issued(t))
        total_a = sum(1 for _, t in pair["a"] if issued(t))
        loop_b, hist_b = main_loop(pair["b"])
        loop_a, hist_a = main_loop(pair["a"])
        change = (
            "same"
            if (loop_a, total_a) == (loop_b, total_b)
            else (
                "main loop longer"
                if loop_a > loop_b
                else "main loop shorter"
                if loop_a < loop_b
                else "main loop same length"
            )
        )
        if loop_a > loop_b:
            longer.append(na)
        vs = pair["variants"]
        lines.append(
            f"| `{short(na)}` | {vs[0]}{f' (+{len(vs) - 1})' if len(vs) > 1 else ''} "
            f"| {total_b} | {total_a} | {loop_b} | {loop_a} | {change} |"
        )
        if loop_a != loop_b or hist_a != hist_b:
            ops = sorted(set(hist_b) | set(hist_a))
            diff = [f"{o} {hist_b[o]}→{hist_a[o]}" for o in ops if hist_b[o] != hist_a[o]]
            details.append(
                f"- `{short(na, 120)}` (before `{short(nb, 120)}`): main loop {loop_b} → {loop_a}: {', '.join(diff)}"
            )
    lines += ["", f"{len(pairs)} kernel pairs; main loop longer after: {len(longer)}.", ""]
    if details:
        lines += ["## Main loops that changed (opcode: before → after)", ""] + details + [""]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="what one build's variants launch, with the SASS")
    c.add_argument("build", type=Path)
    c.add_argument("--out", type=Path)
    c.add_argument("--label", help="what the report calls this build (default: its folder)")
    c.add_argument(
        "--cuobjdump",
        default=shutil.which("cuobjdump") or os.path.join(os.environ.get("GEMM_CUDA_TOOLS", ""), "cuobjdump"),
    )
    r = sub.add_parser("report", help="the two collections side by side, in Markdown")
    r.add_argument("before", type=Path)
    r.add_argument("after", type=Path)
    r.add_argument("--out", type=Path)
    r.add_argument("--shown-command", help="the command the report names (default: this one)")
    args = ap.parse_args(argv)
    try:
        if args.command == "collect":
            if not os.access(args.cuobjdump, os.X_OK):
                raise BuildError(
                    f"no cuobjdump ({args.cuobjdump}): put it on PATH, set "
                    "GEMM_CUDA_TOOLS to its folder, or pass --cuobjdump"
                )
            with tempfile.TemporaryDirectory() as tmp:
                data = collect(args.build.resolve(), args.cuobjdump, Path(tmp))
                data["build"] = args.label or data["build"]
                text = json.dumps(data)
        else:
            command = args.shown_command or " ".join(
                ["tests/cpu/sass_compare.py"] + list(argv if argv is not None else sys.argv[1:])
            )
            text = report(load(args.before), load(args.after), command)
        if args.out:
            args.out.write_text(text)
        else:
            sys.stdout.write(text)
    except BuildError as e:
        print(f"sass_compare: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
