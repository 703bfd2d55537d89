"""A step's inner loop in SASS: the main loop of each rung's kernel, and the sentence naming what
changed in it (from sass.json beside the results)."""

import collections
import gzip
import json

from gemm_study.analysis import sass_loop


def kernel(body, math="FFMA R1, R2, R3, R1", loads="LDS.128 R4, [R5]"):
    """A kernel with a prologue, one loop of `body` times the math and the loads, an epilogue."""
    code = ["MOV R1, RZ", "S2R R0, SR_TID.X"]
    top = len(code)
    code += [loads] * body[1] + [math] * body[0] + ["NOP", "@!PT LDS RZ, [RZ]", "ISETP.NE.AND P0, PT, R7, RZ, PT"]
    code.append(f"@P0 BRA 0x{16 * top:x}")
    code += ["STG.E [R8], R1", "EXIT"]
    return [[16 * i, text] for i, text in enumerate(code)]


def test_the_main_loop_is_the_backward_branch_with_the_math_and_skips_padding():
    length, ops = sass_loop.main_loop([(a, t) for a, t in kernel((64, 8))])
    assert ops["FFMA"] == 64 and ops["LDS.128"] == 8
    assert length == 64 + 8 + 2  # the compare and the branch; the NOP and the @!PT padding are not issued
    assert "NOP" not in ops and "MOV" not in ops


def test_a_kernel_without_a_math_loop_has_none():
    assert sass_loop.main_loop([(0, "MOV R1, RZ"), (16, "EXIT")]) == (0, collections.Counter())


def test_the_sentence_names_the_math_the_largest_moves_and_the_registers():
    a = (80, collections.Counter({"FFMA": 64, "LDS": 16}))
    b = (76, collections.Counter({"FFMA": 64, "LDS.128": 4, "LDS": 0}))
    text = sass_loop.change_sentence(a, b, (128.0, 167.0))
    assert text.startswith("inner loop (SASS): 80 -> 76 instructions, 64 -> 64 math")
    assert "LDS 16 -> 0, LDS.128 0 -> 4" in text and "registers 128 -> 167" in text
    assert sass_loop.change_sentence(a, None) == ""
    assert sass_loop.change_sentence(a, b, (125.0, 220.0), (2.0, 1.0)).endswith(
        "registers 125 -> 220, blocks per SM 2 -> 1"
    )
    assert "blocks per SM" not in sass_loop.change_sentence(a, b, (128.0, 128.0), (2.0, 2.0))


def test_the_loop_of_a_variant_is_looked_up_by_precision_name_and_shape():
    sass = {
        "kernels": {"fp32/warptile/bm:128": {"4096x4096x4096": "k1"}},
        "sass": {"k1": kernel((32, 4))},
    }
    assert sass_loop.loop_of(sass, "fp32", "warptile/bm:128", "4096x4096x4096")[1]["FFMA"] == 32
    assert sass_loop.loop_of(sass, "fp32", "warptile/bm:128", "512x512x512") is None
    assert sass_loop.loop_of(sass, "fp64", "warptile/bm:128", "4096x4096x4096") is None
    assert sass_loop.loop_of(None, "fp32", "x", "1x1x1") is None


def test_sass_beside_the_results_joins_the_context(tmp_path):
    from gemm_study.data.results import load_results

    (tmp_path / "results.json").write_text(json.dumps({"context": {"gemm_study_version": 1}, "benchmarks": []}))
    assert "sass" not in load_results(tmp_path / "results.json")[0]
    data = {"build": "b", "facts": {}, "kernels": {}, "sass": {}}
    (tmp_path / "sass.json.gz").write_bytes(gzip.compress(json.dumps(data).encode()))
    assert load_results(tmp_path / "results.json")[0]["sass"] == data


def test_what_is_attached_from_beside_the_results_is_never_written_back(tmp_path):
    from gemm_study.ncu import crosscheck_cache

    (tmp_path / "results.json").write_text(
        json.dumps({"context": {"gemm_study_version": 1, "gpu_name": "G"}, "benchmarks": []})
    )
    data = {"build": "b", "facts": {}, "kernels": {}, "sass": {"k": [[0, "EXIT"]]}}
    (tmp_path / "sass.json.gz").write_bytes(gzip.compress(json.dumps(data).encode()))
    out = tmp_path / "out" / "cupti.json"
    out.parent.mkdir()
    crosscheck_cache.copy_rows(tmp_path / "results.json", [], out)
    written = json.loads(out.read_text())["context"]
    assert written == {"gemm_study_version": 1, "gpu_name": "G"}


def test_the_stall_count_is_bits_41_to_44_of_the_upper_word():
    # Built field by field: a count of s at bit 41, every other control and encoding bit set
    # around it, so a shift or a mask off by one reads something else.
    around = ((1 << 64) - 1) & ~(0xF << 41)
    for s in range(16):
        assert sass_loop.stall_cycles(around | (s << 41)) == s
    # Upper words as cuobjdump prints them: 0x000fc8... (a count of 4 on a uniform add its next
    # instruction reads) and 0x001fda... (13 before a branch on the predicate it sets).
    assert sass_loop.stall_cycles(0x000FC8000FFFE13F) == 4
    assert sass_loop.stall_cycles(0x001FDA0003F05270) == 13


def test_stall_counts_are_taken_only_where_they_match_the_code():
    sass = {
        "kernels": {"fp32/k/bm:1": {"8x8x8": "k"}},
        "sass": {"k": [[0, "FFMA R1, R2, R3, R1"], [16, "EXIT"]]},
        "stalls": {"k": [4, 5]},
    }
    assert sass_loop.stalls_of(sass, "fp32", "k/bm:1", "8x8x8") == [4, 5]
    assert sass_loop.stalls_of(sass, "fp32", "k/bm:1", "9x9x9") is None
    assert sass_loop.stalls_of(dict(sass, stalls={}), "fp32", "k/bm:1", "8x8x8") is None  # an older sass.json
    for wrong in ([4], [4, 16], [4, -1], [4, True], [4, 1.5]):
        assert sass_loop.stalls_of(dict(sass, stalls={"k": wrong}), "fp32", "k/bm:1", "8x8x8") is None, wrong


def test_the_sass_collection_keeps_each_instructions_stall_count_beside_the_code():
    """How tests/cpu/sass_compare.py reads cuobjdump's lines: an instruction, then the upper word
    of its encoding on a line of its own; an instruction without one has no count."""
    lines = [
        "        /*0090*/                   UIADD3 UR6, -UR6, 0x100000, URZ ;   /* 0x0010000006067890 */",
        "                                                                      /* 0x000fc8000fffe13f */",
        "        /*00a0*/                   ISETP.NE.AND P0, PT, R8, RZ, PT ;   /* 0x000000ff0800720c */",
        "                                                                      /* 0x001fda0003f05270 */",
        "        /*00b0*/                   EXIT ;                              /* 0x000000000000794d */",
    ]
    assert sass_loop.cuobjdump_instructions(lines) == [
        (0x90, "UIADD3 UR6, -UR6, 0x100000, URZ", 4),
        (0xA0, "ISETP.NE.AND P0, PT, R8, RZ, PT", 13),
        (0xB0, "EXIT", None),
    ]
