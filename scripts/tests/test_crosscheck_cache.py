"""The cross-check's key (when ncu must run again) and CUPTI's side taken from a study."""

import json
from types import SimpleNamespace

from conftest import SCRIPTS

from gemm_study.ncu import crosscheck_cache
from gemm_study.report import stages

ROOT = SCRIPTS.parent


def args(**changes):
    base = dict(shape="1024x1024x1024", precisions="fp32,fp64", tags="crosscheck", also_tagged="", limit=0)
    base.update(changes)
    return SimpleNamespace(**base)


def write_crosscheck(folder, key, status=0):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ncu_crosscheck.md").write_text("table\n")
    (folder / "ncu_crosscheck.json").write_text(json.dumps({"key": key, "status": status, "rows": []}))


def test_a_cross_check_with_the_same_key_is_kept_with_its_recorded_key(tmp_path):
    key = crosscheck_cache.key(args(), ROOT)
    recorded = crosscheck_cache.completed(key, {"cuda_driver_version": "13.0"})
    write_crosscheck(tmp_path, recorded, status=1)
    assert crosscheck_cache.kept(tmp_path, key) == recorded
    assert crosscheck_cache.recorded_key(tmp_path) == recorded


def test_any_change_of_what_the_verdict_depends_on_runs_it_again(tmp_path):
    key = crosscheck_cache.key(args(), ROOT)
    for name, value in [
        ("gpu_and_driver", "NVIDIA H200, 999.1"),
        ("cuda_toolkit", "release 14.0"),
        ("files", "0" * 16),
        ("shape", "512x512x512"),
        ("limit", "3"),
    ]:
        write_crosscheck(tmp_path, {**key, name: value})
        assert crosscheck_cache.kept(tmp_path, key) is None, name
    write_crosscheck(tmp_path, {k: v for k, v in key.items() if k != "files"})
    assert crosscheck_cache.kept(tmp_path, key) is None, "a key without an entry is another key"


def test_no_earlier_cross_check_or_an_unreadable_one_runs_it(tmp_path):
    key = crosscheck_cache.key(args(), ROOT)
    assert crosscheck_cache.kept(tmp_path, key) is None
    write_crosscheck(tmp_path, key)
    (tmp_path / "ncu_crosscheck.json").write_text("{not json")
    assert crosscheck_cache.kept(tmp_path, key) is None
    (tmp_path / "ncu_crosscheck.md").unlink()
    write_crosscheck(tmp_path, key)
    (tmp_path / "ncu_crosscheck.md").unlink()
    assert crosscheck_cache.kept(tmp_path, key) is None, "no table: nothing to keep"


def test_the_key_follows_the_collection_code(tmp_path):
    (tmp_path / "profiling").mkdir()
    (tmp_path / "bench").mkdir()
    for name in crosscheck_cache.COLLECTION_FILES:
        (tmp_path / name).write_text("one")
    before = crosscheck_cache.key(args(), tmp_path)["files"]
    (tmp_path / "bench" / "counters.cpp").write_text("two")
    assert crosscheck_cache.key(args(), tmp_path)["files"] != before


def entry(name, **fields):
    return {
        "name": name + "/manual_time",
        "run_name": name + "/manual_time",
        "run_type": "iteration",
        "iterations": 1,
        "real_time": 1.0,
        "time_unit": "ms",
        **fields,
    }


def test_study_rows_are_copied_and_the_incomplete_ones_named(tmp_path):
    study = tmp_path / "results.json"
    full = "gemm/fp32/tuned/m:1024/n:1024/k:1024"
    capped = "gemm/fp32/naive_row/block:16x16/m:1024/n:1024/k:1024"
    failed = "gemm/fp64/tuned/m:1024/n:1024/k:1024"
    absent = "gemm/fp64/cublas/m:1024/n:1024/k:1024"
    study.write_text(
        json.dumps(
            {
                "context": {"gpu_name": "GPU"},
                "benchmarks": [
                    entry(full, counters_available=1, gld_sectors=4.0),
                    entry(capped, counters_available=1, counters_capped=1),
                    entry(failed, error_occurred=True, error_message="wrong result"),
                    entry("gemm/fp32/tuned/m:2048/n:2048/k:2048", counters_available=1),
                ],
            }
        )
    )
    out = tmp_path / "cupti.json"
    missing = crosscheck_cache.copy_rows(study, [full, capped, failed, absent], out)
    assert missing == [capped, failed, absent]
    copied = json.loads(out.read_text())
    assert copied["context"] == {"gpu_name": "GPU"}
    assert [e["run_name"] for e in copied["benchmarks"]] == [full + "/manual_time"]
    more = tmp_path / "more.json"
    more.write_text(json.dumps({"context": {}, "benchmarks": [entry(capped, counters_available=1)]}))
    crosscheck_cache.merge_files(out, more)
    assert len(json.loads(out.read_text())["benchmarks"]) == 2 and not more.exists()


def test_stages_of_the_sampling_harness_are_summed():
    entries = [
        {
            "name": "a",
            "run_type": "iteration",
            "stage_inputs_s": 0.5,
            "stage_warmup_s": 1.0,
            "stage_timing_s": 2.0,
            "stage_reference_s": 0.25,
            "stage_verify_s": 1.0,
            "stage_counters_s": 0,
        }
    ]
    assert stages.bench_stage_seconds(entries) == {
        "inputs": 0.5,
        "verify": 1.0,
        "warmup": 1.0,
        "timing": 2.0,
        "reference": 0.25,
        "counters": 0.0,
    }
