"""A model is shown by a name people recognise: `-m NAME=PATH` names it, and a local
model given by its path alone is shown by its own name, never the path. The local model
here is the packaged all-MiniLM-L6-v2 folder behind a symbolic link, so every command
below reuses the one model the process loaded."""

from __future__ import annotations

import json
from pathlib import Path

from support.environment import ENCODER

from shiftbench.core.models.encoders import resolve_encoder

OWN_NAME = "all-MiniLM-L6-v2"  # the packaged folder's model card's heading


def local_model(tmp_path: Path, name: str = "local-model") -> Path:
    """The packaged model's folder, reached through a link of another name."""
    folder = tmp_path / name
    folder.symlink_to(resolve_encoder(ENCODER)[0], target_is_directory=True)
    return folder


def test_evaluate_shows_a_given_name_or_the_models_own(invoke, tmp_path):
    """`-m mini=PATH`: `mini` in the table, results.json and the mteb-layout folder; `-m
    PATH` (a folder whose name holds '=' is a path): the model card's name; the path only
    in results.json's `path`; the same scores as the model by its Hub name; one embedding
    store for the model however it is named."""
    local = local_model(tmp_path)
    with_equals = local_model(tmp_path, "copy=of-the-model")
    out, cache = tmp_path / "results", tmp_path / "embeddings"
    result = invoke(
        "evaluate", "sample", "-m", f"mini={local}", "-m", with_equals, "-m", ENCODER,
        "-o", out, "--cache-dir", cache, "-q", "--no-plots",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = [line for line in result.stdout.splitlines() if line.startswith("model: ")]
    assert shown == ["model: mini", f"model: {OWN_NAME}", f"model: {ENCODER}"]
    assert str(tmp_path) not in result.stdout.replace(f"results: {out}", "")
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    models = [m["model"] for m in doc["models"]]
    assert [m["id"] for m in models] == ["mini", OWN_NAME, ENCODER]
    assert [m.get("path") for m in models] == [resolve_encoder(ENCODER)[0]] * 2 + [None]
    scores = [[r["scores"] for r in m["results"]] for m in doc["models"]]
    assert scores[0] == scores[1] == scores[2]
    folders = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert folders == [OWN_NAME, "mini", "sentence-transformers__all-MiniLM-L6-v2"]
    assert "| mini | original |" in (out / "report.md").read_text(encoding="utf-8")
    # mini=PATH and PATH share the store when PATH is the same; the Hub name has its own
    again = invoke("evaluate", "sample", "-m", local, "-o", tmp_path / "again",
                   "--cache-dir", cache, "-q", "--no-plots")  # fmt: skip
    assert again.exit_code == 0, again.output
    assert len(list(cache.glob("*.sqlite"))) == 3  # local, copy=of-the-model, the Hub name

    # report names a folder's one model: NAME=RESULTS
    reported = invoke("report", f"renamed={tmp_path / 'again'}", "-o", tmp_path / "report",
                      "--no-plots")  # fmt: skip
    assert reported.exit_code == 0, reported.output
    summary = json.loads((tmp_path / "report" / "summary.json").read_text(encoding="utf-8"))
    assert list(summary["models"]) == ["renamed"]
    refused = invoke("report", f"renamed={out}", "-o", tmp_path / "report2")
    assert (refused.exit_code, refused.stderr.strip()) == (
        2,
        f"Error: RESULTS renamed={out}: NAME= names one model, the folder holds 3",
    )


def test_bad_names_are_refused_before_any_model_loads(invoke, tmp_path):
    """A NAME that cannot be shown: one line, exit 2, nothing written."""
    local = local_model(tmp_path)
    other = tmp_path / "other" / "model"  # the same model card in another folder
    other.mkdir(parents=True)
    for file in Path(resolve_encoder(ENCODER)[0]).iterdir():
        (other / file.name).symlink_to(file)
    out = tmp_path / "results"
    long = "x" * 101
    cases = [
        (["-m", f"={local}"], f"Error: --model '={local}': the name before '=' is empty"),
        (["-m", f"a\nb={local}"],
         f"Error: --model 'a\\nb={local}': the name before '=' holds the control character "
         "U+000A"),
        (["-m", f"{long}={local}"],
         f"Error: --model '{long}={local}': the name before '=' is 101 characters; a name is "
         "at most 100"),
        (["-m", "mini="], "Error: --model 'mini=': no model after '='"),
        (["-m", local, "-m", other],
         f"Error: --model: {local} and {other} would both be shown as {OWN_NAME}; name them "
         "apart with --model NAME=PATH"),
    ]  # fmt: skip
    for args, message in cases:
        result = invoke("evaluate", "sample", *args, "-o", out, "-q")
        assert (result.exit_code, result.stderr.strip()) == (2, message), args
        assert result.stdout == "" and not out.exists()
    result = invoke("report", f"={out}", "-o", tmp_path / "report")
    assert (result.exit_code, result.stderr.strip()) == (
        2,
        f"Error: RESULTS '={out}': the name before '=' is empty",
    )


def test_drift_is_keyed_by_the_encoders_name(scripted, invoke, tmp_path):
    """validate --drift-encoder mini=PATH: `drift:mini` in validation.json and
    validation.md, no path; a bad NAME refused before the model loads."""
    local = local_model(tmp_path)
    run = tmp_path / "run"
    args = ["gen", "sample", "--limit", "2", "-s", "1", "-b", "scripted", "-q", "-o", run]
    assert invoke(*args, "--max-attempts", "1").exit_code == 0
    refused = invoke("validate", run, "--drift-encoder", f"={local}", "-q")
    assert (refused.exit_code, refused.stderr.strip()) == (
        2,
        f"Error: --drift-encoder '={local}': the name before '=' is empty",
    )
    assert not (run / "validation.json").exists()
    result = invoke("validate", run, "--drift-encoder", f"mini={local}", "-q")
    assert result.exit_code == 0, result.output
    summary = json.loads((run / "validation.json").read_text(encoding="utf-8"))
    assert list(summary["configs"]["paraphrase-s1"]["measures"]) == ["drift:mini"]
    report = (run / "validation.md").read_text(encoding="utf-8")
    assert "drift:mini" in report and str(tmp_path) not in report
