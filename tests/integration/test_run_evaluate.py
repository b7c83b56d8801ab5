"""`run` is the single commands chained: an evaluate stage that scores as `gen` then
`evaluate` by hand do (the same configs under the same names, the same scores), resumable,
strictly read; and `init`'s starter spec makes the configs gen makes by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.environment import ENCODER
from support.run import write_spec

from shiftbench.core.models.encoders import resolve_encoder

ROWS = 6  # the sample's first rows: enough for a bootstrap, cheap to encode


def _model(tmp_path: Path) -> Path:
    """The packaged all-MiniLM-L6-v2 as a local folder of another name."""
    folder = tmp_path / "mini-model"
    folder.symlink_to(resolve_encoder(ENCODER)[0], target_is_directory=True)
    return folder


def _spec(tmp_path: Path) -> Path:
    return write_spec(
        tmp_path,
        f"""
        output: out
        sources:
          - name: sample
            limit: {ROWS}
        generator:
          backend: scripted
        human_eval:
          per_stratum: 2
        evaluate:
          models: [mini=./mini-model]
          plots: false
        """,
    )


def _scores(results: Path) -> list[tuple]:
    doc = json.loads((results / "results.json").read_text(encoding="utf-8"))
    return [
        (m["model"]["id"], r["config"], r["split"], r["rows"], r["main_score"], r.get("delta"),
         r.get("ci95"))
        for m in doc["models"] for r in m["results"]
    ]  # fmt: skip


def _tables(stdout: str) -> list[str]:
    """The model table's lines as evaluate prints them (from `model:` to the blank line
    after the axis table)."""
    lines = stdout.splitlines()
    start = lines.index("model: mini")
    end = next(i for i, line in enumerate(lines) if line.startswith("results: "))
    return lines[start:end]


def _data_files(run: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(run)): p.read_bytes()
        for p in sorted(run.rglob("*.jsonl"))
        if not p.relative_to(run).parts[0].startswith("validation")
    }


def test_run_until_evaluate_scores_as_gen_then_evaluate_by_hand(
    invoke, scripted, tmp_path, monkeypatch
):
    _model(tmp_path)
    spec = _spec(tmp_path)
    result = invoke("run", spec, "--until", "evaluate", "-q")
    assert result.exit_code == 0, result.output
    out = tmp_path / "out" / "sample"
    assert "[evaluate] sample: running" in result.stdout
    assert result.stdout.splitlines()[-2:] == [
        f"results: {out / 'results'}",
        f"done: gen, validate, human-eval, evaluate for 1 source in {tmp_path / 'out'}",
    ]
    assert "## Results" not in (out / "run" / "README.md").read_text()  # gen's card, not yet

    # the same work by hand, from another folder (a relative -m path is the user's own)
    monkeypatch.chdir(tmp_path)
    gen = invoke("gen", "sample", "--limit", ROWS, "-b", "scripted", "-o", "by-hand/run", "-q")
    assert gen.exit_code == 0, gen.output
    scored = invoke("evaluate", "by-hand/run", "-m", "mini=mini-model", "-o", "by-hand/results",
                    "--no-plots", "-q")  # fmt: skip
    assert scored.exit_code == 0, scored.output

    made = json.loads((out / "run" / "shiftbench.json").read_text(encoding="utf-8"))
    by_hand = json.loads((tmp_path / "by-hand/run/shiftbench.json").read_text(encoding="utf-8"))
    assert sorted(made["configs"]) == sorted(by_hand["configs"]) == ["original", "paraphrase-s1337"]
    assert made["protocol"] == by_hand["protocol"]  # nothing recorded as overridden
    assert _data_files(out / "run") == _data_files(tmp_path / "by-hand/run")
    assert _scores(out / "results") == _scores(tmp_path / "by-hand/results")
    assert [s[1] for s in _scores(out / "results")] == ["original", "paraphrase-s1337"]
    assert _tables(result.stdout) == _tables(scored.stdout)


def test_a_second_run_skips_evaluate_and_the_card_carries_its_scores(invoke, scripted, tmp_path):
    _model(tmp_path)
    spec = _spec(tmp_path)
    assert invoke("run", spec, "--until", "evaluate", "-q").exit_code == 0
    results = tmp_path / "out" / "sample" / "results" / "results.json"
    written = results.stat().st_mtime_ns
    again = invoke("run", spec, "-q")
    assert again.exit_code == 0, again.output
    assert "[evaluate] sample: finished earlier, skipped" in again.stdout
    assert "[card] sample: running" in again.stdout
    assert results.stat().st_mtime_ns == written
    card = (tmp_path / "out" / "sample" / "run" / "README.md").read_text(encoding="utf-8")
    assert "## Results" in card and "| config | `mini` |" in card
    assert "model-index:" in card
    state = json.loads((tmp_path / "out" / "sample" / "state.json").read_text(encoding="utf-8"))
    assert sorted(state) == ["card", "evaluate", "gen", "human-eval", "validate"]

    # a changed evaluate setting scores again; gen and validate stay finished
    spec.write_text(spec.read_text().replace("plots: false", "plots: false\n  resamples: 0"))
    third = invoke("run", spec, "--until", "evaluate", "-q")
    assert third.exit_code == 0, third.output
    assert "[gen] sample: finished earlier, skipped" in third.stdout
    assert "[evaluate] sample: running" in third.stdout
    assert all(s[6] is None for s in _scores(results.parent))


BASE = "output: o\nsources: [{name: sample}]\nevaluate:\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("  modles: [x]\n",
         "spec.yaml:4: evaluate.modles: unknown key; allowed here: batch_size, cache_dir, "
         "device, encode_kwargs, evalrank_centre, evalrank_positives, faithful, interval, "
         "model_kwargs, models, plots, precision, prompts, protocol, resample_seed, "
         "resamples, trust_remote_code; did you mean models?"),
        ("  models: ['mini=']\n",
         "spec.yaml:4: evaluate.models[0]: model 'mini=': no model after '='"),
        ("  models: [x]\n  protocol: htb\n",
         "spec.yaml:5: evaluate.protocol: unknown protocol 'htb'; available: shiftbench, "
         "pteb, hteb; did you mean hteb?"),
        ("  models: [x]\n  resamples: 10\n",
         "spec.yaml:5: evaluate.resamples: must be 0 (no intervals) or at least 1000, not 10"),
        ("  models: [x]\n  interval: wide\n",
         "spec.yaml:5: evaluate.interval: 'wide' is not one of 'percentile', 'expanded'."),
        ("  models: [x]\n  batch_size: 0\n",
         "spec.yaml:5: evaluate.batch_size: 0 is not in the range x>=1."),
        ("  models: [x]\n  prompts: {query: 3}\n",
         "spec.yaml:5: evaluate.prompts.query: must be a string, not 3"),
    ],
)  # fmt: skip
def test_a_bad_evaluate_key_is_one_line(invoke, tmp_path, text, message):
    spec = tmp_path / "spec.yaml"
    spec.write_text(BASE + text, encoding="utf-8")
    for extra in ([], ["--dry-run"]):
        result = invoke("run", spec, *extra)
        assert (result.exit_code, result.stderr) == (2, f"Error: {tmp_path}/{message}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml"]


def test_until_evaluate_needs_models(invoke, tmp_path):
    spec = write_spec(tmp_path, "output: o\nsources: [{name: sample}]\n")
    result = invoke("run", spec, "--until", "evaluate")
    assert (result.exit_code, result.stderr) == (
        2, "Error: --until evaluate: the spec names no evaluate.models to score\n")  # fmt: skip
    assert not (tmp_path / "o").exists()


def test_inits_spec_makes_the_configs_gen_makes_by_default(invoke, scripted, tmp_path):
    """The starter leaves transforms and seeds to the protocol, as gen without options:
    seed 1337, the same config names and the same protocol record."""
    spec = tmp_path / "shiftbench.yaml"
    assert invoke("init", spec).exit_code == 0
    text = spec.read_text(encoding="utf-8")
    text = text.replace("  # backend: embedded\n", "  backend: scripted\n")
    text = text.replace("- name: sample\n", "- name: sample\n    limit: 2\n")
    spec.write_text(text, encoding="utf-8")
    result = invoke("run", spec, "--until", "gen", "-q")
    assert result.exit_code == 0, result.output
    gen = invoke("gen", "sample", "--limit", 2, "-b", "scripted", "-o", tmp_path / "gen", "-q")
    assert gen.exit_code == 0, gen.output
    made = json.loads((tmp_path / "release/sample/run/shiftbench.json").read_text())
    by_gen = json.loads((tmp_path / "gen/shiftbench.json").read_text())
    assert sorted(made["configs"]) == sorted(by_gen["configs"]) == ["original", "paraphrase-s1337"]
    assert made["protocol"]["settings"]["seeds"] == by_gen["protocol"]["settings"]["seeds"]
    assert made["protocol"]["overridden"] == by_gen["protocol"]["overridden"] == []
