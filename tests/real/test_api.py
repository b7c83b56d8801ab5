"""The Python API: the README's example prints what the commands print, and the stage
functions refuse bad input as the commands do.

The example asks the generator for the first 12 rows of what the README's main command
generates (the same prompts, seed and token budget). CI runs that command first, in a
fresh environment, and points $SHIFTBENCH_TEST_GENERATIONS at its generation cache: the
example here reads those rows instead of generating them a second time. Without it, the
example generates its rows itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.environment import ENCODER
from support.files import fenced_after

README = Path(__file__).resolve().parents[2] / "README.md"
GENERATIONS_ENV = "SHIFTBENCH_TEST_GENERATIONS"


def readme_block(marker: str) -> str:
    return fenced_after(README.read_text(encoding="utf-8"), f"<!-- {marker} -->")


def readme_example() -> str:
    return readme_block("python-example")


@pytest.mark.heavy
def test_the_readme_example_prints_the_commands_scores(tmp_path, invoke, monkeypatch):
    """The example run as a user would (a fresh interpreter in an empty folder), then the
    same run through the commands: same run folder bytes, same scores."""
    cache = tmp_path / "cache"
    seed = os.environ.get(GENERATIONS_ENV)
    if seed:  # CI: the main command's rows (module docstring)
        cache.mkdir()
        shutil.copyfile(Path(seed) / "generations.sqlite", cache / "generations.sqlite")
    env = {**os.environ, "SHIFTBENCH_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    api = tmp_path / "api"
    api.mkdir()
    # The README's environment has no llama-cpp-python, so its engine "auto" is
    # transformers; this one has it, so the example runs with llama_cpp blocked.
    example = "import sys\nsys.modules['llama_cpp'] = None\n" + readme_example()
    done = subprocess.run(
        [sys.executable, "-c", example],
        cwd=api, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(api.iterdir()) == []  # the run and results folders went under the cache
    assert done.stdout == readme_block("python-output"), "README.md shows other figures"
    printed = done.stdout.splitlines()
    rows = [line.split() for line in printed[:-1]]
    assert [r[0] for r in rows] == ["original", "paraphrase-s1337"]

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(cache))
    gen = invoke("gen", "sample", "--limit", "12", "--max-new-tokens", "64", "--engine",
                 "transformers", "-o", "cli/run", "-q")  # fmt: skip
    assert gen.exit_code == 0, gen.output
    made = sorted(p.relative_to(tmp_path / "cli/run") for p in (tmp_path / "cli/run").rglob("*"))
    assert made == sorted(
        p.relative_to(cache / "runs/sample") for p in (cache / "runs/sample").rglob("*")
    )
    for path in made:
        if (cache / "runs/sample" / path).is_file():
            assert (tmp_path / "cli/run" / path).read_bytes() == (
                cache / "runs/sample" / path
            ).read_bytes(), path

    out = tmp_path / "cli/results"
    evaluated = invoke("evaluate", "cli/run", "-m", ENCODER, "-o", out, "-q")
    assert evaluated.exit_code == 0, evaluated.output
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    records = results["models"][0]["results"]
    assert [r[1] for r in rows] == [f"{r['main_score']:.5f}" for r in records]
    assert rows[1][2] == f"{records[1]['delta']:+.5f}" and len(rows[0]) == 2
    total = json.loads((out / "summary.json").read_text(encoding="utf-8"))["models"][ENCODER][
        "total"
    ]
    low, high = total["ci95"]
    assert printed[-1] == (
        f"Interval(score={total['score']!r}, delta={total['delta']!r}, ci95=({low!r}, {high!r}))"
    )
