"""gen --dry-run's estimate: tokens from the texts, time from a throughput measured here."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from support.run import write_spec

from shiftbench.gen.estimate import machine

ARGS = ["gen", "sample", "--limit", "4", "-b", "scripted", "-t", "paraphrase", "-q"]
HINT = (
    "add --calibrate to measure one with a few real calls (kept in the cache), or run gen: "
    "every run records what it measured"
)


@pytest.fixture
def steady_load(monkeypatch: pytest.MonkeyPatch) -> float:
    """The load average every run and dry run sees."""
    from shiftbench.gen import api

    monkeypatch.setattr(api, "load_average", lambda: 1.5)
    return 1.5


def record_file() -> Path:
    return Path(os.environ["SHIFTBENCH_CACHE_DIR"]) / "throughput.json"


def sample_texts(rows: int) -> list[str]:
    """The unique texts of the sample's first rows, as gen sends them."""
    from shiftbench.core.data.sources import SAMPLE_DIR

    lines = (SAMPLE_DIR / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    found = [json.loads(line) for line in lines[:rows]]
    return list(dict.fromkeys(r[f] for r in found for f in ("sentence1", "sentence2")))


def test_the_dry_run_scales_a_recorded_throughput(scripted, invoke, tmp_path, steady_load):
    planted = {
        "backend": "scripted", "model": "default", "host": machine(),
        "measured_at": "2026-01-02T03:04:05Z", "kind": "gen run", "cores": 2,
        "load_average": 4.25, "planned_calls": 50, "planned_tokens": 1000, "calls": 60,
        "generated_tokens": 1500, "prompt_tokens": 9000, "seconds": 200.0,
        "overhead_seconds": 12.0, "load_seconds": 3.0,
    }  # fmt: skip
    record_file().parent.mkdir(parents=True)
    record_file().write_text(
        json.dumps({"records": {f"scripted | default | {machine()}": planted}}), encoding="utf-8"
    )
    result = invoke(*ARGS, "-o", tmp_path / "run", "--dry-run")
    assert result.exit_code == 0, result.output
    texts = sample_texts(4)
    # a paraphrase is as long as its input, four characters a token (its budget is larger)
    tokens = sum(math.ceil(len(t) / 4) for t in texts)
    by_tokens = tokens * 200.0 / 1000  # the record's seconds per planned token
    by_calls = len(texts) * 200.0 / 50
    assert len(texts) == 8 and tokens == 93
    assert (by_tokens, by_calls) == (18.6, 32.0)  # plus 12 s of the rest, 3 s of load
    assert round(math.sqrt(by_tokens * by_calls)) == 24  # the figure: between the two
    assert result.stdout.splitlines()[-3:] == [
        "estimate: 8 calls, about 93 tokens to generate (first attempts: each input's length "
        "times its transform's, within the call's budget)",
        "time: about 39 s (34 s to 47 s scaled by tokens or by calls): 24 s generating, 12 s "
        "reading, checking and writing, 3 s loading the model",
        "measured: a gen run of scripted default on this machine at 2026-01-02 03:04:05 UTC, "
        "load average 4.2 on 2 cores: 50 planned calls (about 1,000 tokens) took 200 s of "
        "generating, with 60 calls made (retries and larger budgets included) and 1,500 "
        "tokens generated; the estimate holds at that load (load average now 1.5)",
    ]
    assert not (tmp_path / "run").exists() and scripted.calls == []


def test_a_gen_run_records_what_it_measured(scripted, invoke, tmp_path, steady_load):
    plan = invoke(*ARGS, "-o", tmp_path / "run", "--dry-run")
    assert plan.stdout.splitlines()[-1] == (
        f"time: not known yet: no gen run of scripted default has been measured on this "
        f"machine; {HINT}"
    )
    assert not record_file().exists()
    result = invoke(*ARGS, "-o", tmp_path / "run")
    assert result.exit_code == 0, result.output
    records = json.loads(record_file().read_text(encoding="utf-8"))["records"]
    assert list(records) == [f"scripted | default | {machine()}"]
    record = records[f"scripted | default | {machine()}"]
    texts = sample_texts(4)
    # the scripted backend reports no token counts: characters / 4 of what passed through
    assert {k: record[k] for k in ("kind", "model", "host", "load_average", "calls")} == {
        "kind": "gen run", "model": "default", "host": machine(), "load_average": 1.5,
        "calls": 8,
    }  # fmt: skip
    assert (record["planned_calls"], record["planned_tokens"]) == (8, 93)
    assert record["generated_tokens"] == sum(math.ceil(len(f"REWRITTEN {t}") / 4) for t in texts)
    assert record["prompt_tokens"] == sum(math.ceil(len(p) / 4) for p in scripted.prompts)
    assert record["seconds"] >= 0 and record["overhead_seconds"] >= 0
    # a dry run of other rows now has a time, from that record
    again = invoke(*ARGS[:2], "--limit", "6", *ARGS[4:], "-o", tmp_path / "other", "--dry-run")
    assert again.stdout.splitlines()[-2].startswith("time: about ")
    assert again.stdout.splitlines()[-1].startswith(
        "measured: a gen run of scripted default on this machine at "
    )


def test_a_corrupt_record_file_is_ignored_with_a_warning(scripted, invoke, tmp_path):
    record_file().parent.mkdir(parents=True)
    record_file().write_text('{"records": {', encoding="utf-8")
    result = invoke(*ARGS, "-o", tmp_path / "run", "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"{record_file()} is no throughput record (not JSON: Expecting property "
        "name enclosed in double quotes at line 1); ignored\n"
    )
    assert result.stdout.splitlines()[-1].startswith("time: not known yet: no gen run of ")
    # the next gen run writes a readable file in its place
    assert invoke(*ARGS, "-o", tmp_path / "run").exit_code == 0
    assert list(json.loads(record_file().read_text(encoding="utf-8"))["records"]) == [
        f"scripted | default | {machine()}"
    ]


def test_calibrate_measures_with_a_few_real_calls(scripted, invoke, tmp_path, steady_load):
    out = tmp_path / "run"
    result = invoke(*ARGS[:3], "12", *ARGS[4:], "-o", out, "--dry-run", "--calibrate")
    assert result.exit_code == 0, result.output
    # the calibration rewrote the first 8 rows' 16 texts, kept in the cache: the plan counts
    # them as cached, and only the rest are estimated
    assert len(scripted.prompts) == 16
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["paraphrase-s1337", "24", "24", "16", "0", "8"]
    assert lines[-3].startswith("estimate: 8 calls, about ")
    assert lines[-2].startswith("time: about ")
    assert lines[-1].startswith("measured: a calibration of scripted default on this machine")
    record = json.loads(record_file().read_text(encoding="utf-8"))["records"]
    assert record[f"scripted | default | {machine()}"]["kind"] == "calibration"
    assert not out.exists()

    # a calibration that cannot run says why; a second flag without --dry-run is refused
    scripted.fail_from_call = 1
    record_file().unlink()
    failed = invoke(*ARGS, "-o", out, "--dry-run", "--calibrate", "--cache-dir", tmp_path / "c")
    assert failed.exit_code == 0, failed.output
    assert failed.stdout.splitlines()[-1].startswith(
        "time: not known yet: a calibration of scripted default failed (backend scripted "
        "failed 3 times; finished rows are cached (ConnectionError: scripted failure)); "
    )
    refused = invoke(*ARGS, "-o", out, "--calibrate")
    assert refused.exit_code == 2
    assert refused.stderr == (
        "Error: --calibrate goes with --dry-run (every gen run measures itself)\n"
    )


def test_a_calibration_says_what_it_does_and_counts_its_calls(scripted, invoke, tmp_path):
    """Without -q a calibration is not silent: a line names it before it starts, then its
    texts are counted as a gen run counts them (a first calibration on a new machine takes
    about a minute, the model's conversion and load included)."""
    args = [a for a in ARGS if a != "-q"]
    result = invoke(*args, "-o", tmp_path / "run", "--dry-run", "--calibrate",
                    "--cache-dir", tmp_path / "cache")  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "calibrating: paraphrase-s1337 on the first 4 rows of each split, each text tried "
        "once, to measure this machine's throughput ..."
    )


def test_run_dry_run_says_its_time_is_gens_alone(scripted, invoke, tmp_path, steady_load):
    """run --dry-run times gen from the throughput record; the later stages (validate's
    checks, an encoder's load and encoding) are not in that figure, and the plan says so."""
    assert invoke(*ARGS, "-o", tmp_path / "run").exit_code == 0  # a record to time by
    spec = write_spec(
        tmp_path,
        """
        output: out
        sources:
          - name: sample
            limit: 6
        transforms: [paraphrase]
        generator:
          backend: scripted
        """,
    )
    result = invoke("run", spec, "--until", "validate", "--dry-run")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("time: about "))
    assert lines[at + 2] == "that time is gen's alone; validate comes on top"
