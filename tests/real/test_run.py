"""shiftbench run and init: one spec file drives every stage, strictly read, resumable."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support.files import cached_rows, read_rows
from support.run import stsb_spec, write_spec
from support.waiting import wait_for


def test_stages_run_in_order_and_a_rerun_skips_finished_ones(
    invoke, scripted, shared_data, tmp_path
):
    spec = stsb_spec(tmp_path, shared_data)
    result = invoke("run", spec, "--until", "validate", "-q")
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "out"
    assert [line for line in result.stdout.splitlines() if line.startswith("[")] == [
        "[gen] STSBenchmark: running", "[gen] sample: running",
        "[validate] STSBenchmark: running", "[validate] sample: running",
    ]  # fmt: skip
    for name in ("STSBenchmark", "sample"):
        assert sorted(json.loads((out / name / "state.json").read_text())) == ["gen", "validate"]
        assert not (out / name / "human-eval").exists()
        assert (out / name / "run" / "shiftbench-spec.yaml").read_bytes() == spec.read_bytes()
    calls = len(scripted.calls)
    assert calls > 0

    result = invoke("run", spec, "-q")
    assert result.exit_code == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("[")] == [
        "[gen] STSBenchmark: finished earlier, skipped", "[gen] sample: finished earlier, skipped",
        "[validate] STSBenchmark: finished earlier, skipped",
        "[validate] sample: finished earlier, skipped",
        "[human-eval] STSBenchmark: running", "[human-eval] sample: running",
        "[card] STSBenchmark: running", "[card] sample: running",
    ]  # fmt: skip
    assert len(scripted.calls) == calls  # nothing generated again
    stsb = out / "STSBenchmark"
    assert read_rows(stsb / "run" / "paraphrase-s2" / "test.jsonl")[0]["sentence1"].startswith(
        "REWRITTEN "
    )
    assert sorted(p.name for p in (stsb / "human-eval" / "export").iterdir()) == ["html", "mturk"]
    assert sorted(p.name for p in (stsb / "human-eval" / "export" / "html").iterdir()) == [
        "b01.html", "b02.html"]  # fmt: skip
    card = (stsb / "run" / "README.md").read_text(encoding="utf-8")
    digest = hashlib.sha256(spec.read_bytes()).hexdigest()
    assert f"sha256 `{digest}`" in card
    assert "limit: 6" in card.split("## How this release was made", 1)[1]

    # a changed human-eval setting redoes human-eval and the card, nothing before them
    spec.write_text(spec.read_text().replace("raters: 2", "raters: 3"), encoding="utf-8")
    result = invoke("run", spec, "-q")
    assert result.exit_code == 0, result.stderr
    ran = [line for line in result.stdout.splitlines() if line.endswith(": running")]
    assert ran == ["[human-eval] STSBenchmark: running", "[human-eval] sample: running",
                   "[card] STSBenchmark: running", "[card] sample: running"]  # fmt: skip
    assert (stsb / "human-eval" / "export" / "html" / "b03.html").is_file()
    new_digest = hashlib.sha256(spec.read_bytes()).hexdigest()
    assert f"sha256 `{new_digest}`" in (stsb / "run" / "README.md").read_text(encoding="utf-8")


E2E_SPEC = """
output: out
sources:
  - name: STSBenchmark
    data_dir: {data}/STSBenchmark
    limit: 2
  - name: STSBenchmarkMultilingualSTS
    folder: stsb-multilingual
    data_dir: {data}/STSBenchmarkMultilingualSTS
    subsets: [de, fr]
    splits: [test]
    limit: 1
transforms: [paraphrase, summarisation, translation]
seeds: [1]
languages: [es, de]
generator:
  max_new_tokens: 32
  # the run's resumption is tested, not the tiny model's rewrites: one try per text (the
  # retries with doubled budgets took most of the time), and no failure gate
  max_attempts: 1
  max_failure_rate: 1
  # the transformers engine's rewrites: human_eval needs a row that passed its checks,
  # and every llama.cpp rewrite of STSBenchmark's two rows failed them
  engine: transformers
human_eval:
  per_stratum: 3
  raters: 2
"""


def cache_rows(cache: Path) -> dict[str, int]:
    """Every cached generation's key and SQLite rowid (a row made again gets a new rowid)."""
    import sqlite3

    with sqlite3.connect(cache / "generations.sqlite") as conn:
        return dict(conn.execute("SELECT key, rowid FROM generations").fetchall())


def tree(folder: Path, root: Path) -> dict[str, bytes]:
    """Every file's bytes, with the run's own location (batch.json records it) masked."""
    return {
        str(p.relative_to(folder)): p.read_bytes().replace(str(root).encode(), b"<root>")
        for p in folder.rglob("*")
        if p.is_file()
    }


@pytest.mark.heavy
def test_a_killed_run_finishes_as_an_uninterrupted_one(shared_data, tmp_path):
    """The done-when run: two sources (one multilingual, two subsets), three transformations
    (one seed: the three subprocess runs made 96 generations with two, the suite's longest
    test; seeds are byte-checked in test_gen and test_real_servers),
    the embedded SmolLM2; killed once its first source's generation is done, then run
    again, it ends with the files of a run never interrupted, making nothing twice."""
    import os
    import signal
    import subprocess
    import sys
    from collections.abc import Callable

    def start(folder: Path, cache: Path, *args: str) -> subprocess.Popen[str]:
        folder.mkdir()
        spec = folder / "spec.yaml"
        spec.write_text(E2E_SPEC.format(data=shared_data), encoding="utf-8")
        env = {**os.environ, "SHIFTBENCH_CACHE_DIR": str(cache)}
        return subprocess.Popen(
            [sys.executable, "-m", "shiftbench", "run", str(spec), "-q", *args],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    killed, cache = tmp_path / "killed", tmp_path / "cache-killed"
    process = start(killed, cache)
    first = killed / "out" / "STSBenchmark"

    def running(condition: Callable[[], bool]) -> Callable[[], bool]:
        def check() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"the run exited early: {process.communicate()}")
            return condition()

        return check

    try:
        wait_for(
            running((first / "state.json").is_file), 1800, "the first source's generation to end"
        )
        first_rows = cached_rows(cache)
        wait_for(  # a row of the second source is finished: its generation is under way
            running(lambda: cached_rows(cache) > first_rows),
            600,
            "the second source's first cached row",
        )
    finally:
        process.send_signal(signal.SIGKILL)
    process.wait()
    assert json.loads((first / "state.json").read_text()).keys() == {"gen"}
    assert not (killed / "out" / "stsb-multilingual" / "state.json").exists()
    made_before = cache_rows(cache)
    first_files = {p: p.stat().st_mtime_ns for p in (first / "run").rglob("*.jsonl")}

    spec = killed / "spec.yaml"
    env = {**os.environ, "SHIFTBENCH_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-m", "shiftbench", "run", str(spec), "-q"],
        env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "[gen] STSBenchmark: finished earlier, skipped" in done.stdout
    assert "[gen] stsb-multilingual: running" in done.stdout
    assert {p: p.stat().st_mtime_ns for p in first_files} == first_files
    made_after = cache_rows(cache)
    assert {k: made_after[k] for k in made_before} == made_before  # nothing made twice
    assert len(made_after) > len(made_before)

    reference = start(tmp_path / "reference", tmp_path / "cache-reference")
    _, err = reference.communicate(timeout=1800)
    assert reference.returncode == 0, err
    assert len(cache_rows(tmp_path / "cache-reference")) == len(made_after)
    for name in ("STSBenchmark", "stsb-multilingual"):
        got = tree(killed / "out" / name, killed)
        want = tree(tmp_path / "reference" / "out" / name, tmp_path / "reference")
        assert got == want, sorted(k for k in got.keys() | want.keys() if got.get(k) != want.get(k))
    multi = killed / "out" / "stsb-multilingual"
    configs = sorted(p.name for p in (multi / "run").iterdir() if p.is_dir())
    assert "translation-s1.fr" in configs and "original.de" in configs
    assert (multi / "run" / "validation.md").is_file()
    assert (multi / "human-eval" / "export" / "html" / "b02.html").is_file()
    assert "## How this release was made" in (multi / "run" / "README.md").read_text()


@pytest.mark.heavy
def test_ray_runner_maps_gen_over_shards_on_a_local_ray_instance(invoke, tmp_path):
    """scale.runner ray: two shards as Ray Data tasks on a local Ray instance, with the
    embedded SmolLM2; merged, they are the run folder one process writes."""
    pytest.importorskip("ray.data")
    spec = write_spec(
        tmp_path,
        """
        output: out
        sources:
          - name: sample
            limit: 5
        transforms: [paraphrase]
        seeds: [3]
        generator:
          max_new_tokens: 32
          max_attempts: 1  # one try per text: the retries are gen's, tested in test_gen
        scale:
          runner: ray
          shards: 2
        """,
    )
    result = invoke("run", spec, "--until", "gen", "-q")
    assert result.exit_code == 0, result.stderr
    run = tmp_path / "out" / "sample" / "run"
    assert f"merged 2 Ray shards into {run}: original, paraphrase-s3" in result.stdout
    parts = sorted(p.name for p in (tmp_path / "out" / "sample" / "shards").iterdir())
    assert parts == ["part-0-of-2", "part-1-of-2"]
    shard_rows = read_rows(
        tmp_path / "out" / "sample" / "shards" / parts[1] / "paraphrase-s3" / "test.jsonl"
    )
    assert [r["row_id"] for r in shard_rows] == [1, 3]

    # the same settings in one process, with a cache of its own
    os_env = {"SHIFTBENCH_CACHE_DIR": str(tmp_path / "one-process-cache")}
    with pytest.MonkeyPatch.context() as mp:
        for key, value in os_env.items():
            mp.setenv(key, value)
        single = tmp_path / "single"
        args = ["gen", "sample", "--limit", "5", "-t", "paraphrase", "-s", "3"]
        quick = ["--max-new-tokens", "32", "--max-attempts", "1"]
        assert invoke(*args, *quick, "-o", single, "-q").exit_code == 0
    for name in ("shiftbench.json", "original/test.jsonl", "paraphrase-s3/test.jsonl", "README.md"):
        assert (run / name).read_bytes() == (single / name).read_bytes(), name
