"""The Python API: the README's example prints what the commands print, and the stage
functions refuse bad input as the commands do."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import shiftbench

README = Path(__file__).resolve().parents[1] / "README.md"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.search(r"<!-- python-example -->\n```python\n(.*?)```", text, re.S)
    assert found, "README.md has no python-example block"
    return found.group(1)


@pytest.mark.slow
def test_the_readme_example_prints_the_commands_scores(tmp_path, invoke, monkeypatch):
    """The example run as a user would (a fresh interpreter in an empty folder), then the
    same run through the commands: same run folder bytes, same scores."""
    cache = tmp_path / "cache"
    env = {**os.environ, "SHIFTBENCH_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    api = tmp_path / "api"
    api.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", readme_example()],
        cwd=api, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    rows = [line.split() for line in printed[:-1]]
    assert [r[0] for r in rows] == ["original", "paraphrase-s1337"]

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(cache))
    gen = invoke("gen", "sample", "--limit", "12", "-o", "cli/run", "-q")
    assert gen.exit_code == 0, gen.output
    made = sorted(p.relative_to(tmp_path / "cli/run") for p in (tmp_path / "cli/run").rglob("*"))
    assert made == sorted(
        p.relative_to(api / "runs/sample") for p in (api / "runs/sample").rglob("*")
    )
    for path in made:
        if (api / "runs/sample" / path).is_file():
            assert (tmp_path / "cli/run" / path).read_bytes() == (
                api / "runs/sample" / path
            ).read_bytes(), path

    out = tmp_path / "cli/results"
    evaluated = invoke("evaluate", "cli/run", "-m", MODEL, "-o", out, "-q")
    assert evaluated.exit_code == 0, evaluated.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    records = results["models"][0]["results"]
    assert [r[1] for r in rows] == [f"{r['main_score']:.5f}" for r in records]
    assert rows[1][2] == f"{records[1]['delta']:+.5f}" and len(rows[0]) == 2
    total = json.loads((out / "summary.json").read_text(encoding="utf-8"))["models"][MODEL]["total"]
    low, high = total["ci95"]
    assert printed[-1] == (
        f"Interval(score={total['score']!r}, delta={total['delta']!r}, ci95=({low!r}, {high!r}))"
    )


def test_generate_refuses_bad_settings_before_writing(tmp_path):
    source = shiftbench.load_source("sample")
    settings = shiftbench.GenSettings(transforms=("paraphrase",), output=tmp_path / "run")
    bad = [
        (
            {"engine_args": {"enforce_eager": True}},
            "--engine-arg applies to the vllm backend only",
        ),
        ({"transforms": ("paraphrse",)}, "unknown transform 'paraphrse'"),
        ({"protocol": "ptb"}, "unknown protocol 'ptb'"),
        ({"rewrite": "corpus"}, "--rewrite corpus"),
    ]
    from dataclasses import replace

    for changes, message in bad:
        with pytest.raises(shiftbench.InputError, match=re.escape(message)):
            shiftbench.generate(source, replace(settings, **changes))
    assert not (tmp_path / "run").exists()


def test_the_commands_defaults_are_the_settings_defaults():
    """One place for each default: `shiftbench gen --help` shows GenSettings' values."""
    from shiftbench.cli import evaluate, gen

    settings = shiftbench.GenSettings()
    options = {p.name: p.to_info_dict()["default"] for p in gen.params}
    for name in ("languages", "backend", "num_ctx", "concurrency", "batch_size", "protocol"):
        assert options[name] == getattr(settings, name), name
    for name in ("transforms", "seeds", "temperature", "top_p"):  # the protocol's
        assert getattr(settings, name) is None and options[name] in (None, ()), name
    scoring = shiftbench.EvalSettings()
    options = {p.name: p.to_info_dict()["default"] for p in evaluate.params}
    for name in ("batch_size", "precision", "resamples", "resample_seed"):
        assert options[name] == getattr(scoring, name), name


def test_evaluation_refuses_bad_input_before_any_model_loads(tmp_path):
    with pytest.raises(shiftbench.InputError, match="--resamples must be 0"):
        shiftbench.Evaluation("sample", shiftbench.EvalSettings(resamples=10))
    with pytest.raises(shiftbench.InputError, match="--faithful needs a run folder"):
        shiftbench.Evaluation("sample", shiftbench.EvalSettings(faithful="judge>=4"))
    evaluation = shiftbench.Evaluation("sample", shiftbench.EvalSettings(output=tmp_path / "r"))
    with pytest.raises(shiftbench.InputError, match="name at least one model"):
        evaluation.score([])
    assert not (tmp_path / "r").exists()
