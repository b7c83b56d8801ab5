"""Shared fixtures: isolated caches, no implicit Hub access, real data and models."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

DATA_ENV = "SHIFTBENCH_TEST_DATA"


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own generation cache and datasets cache, and no Hub token."""
    base = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(base / "shiftbench"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(base / "datasets"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Real MTEB datasets in Hub layout, from $SHIFTBENCH_TEST_DATA.

    Unset: the test is skipped. Set but missing: the test fails, so CI cannot pass by
    silently skipping what it was asked to run.
    """
    value = os.environ.get(DATA_ENV)
    if not value:
        pytest.skip(f"{DATA_ENV} is not set")
    path = Path(value)
    if not (path / "STSBenchmark" / "README.md").is_file():
        pytest.fail(f"{DATA_ENV}={value} does not hold the real datasets (no STSBenchmark)")
    return path


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def invoke(runner: CliRunner):
    """Run the shiftbench CLI in-process; returns click's Result (stdout, stderr, code)."""
    from shiftbench.cli import cli

    def run(*args: str):
        return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)

    return run


def read_rows(path: Path) -> list[dict]:
    """The rows of a JSON Lines file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch):
    """Register the scripted backend (see scripted_backend.py) with a clean slate."""
    from scripted_backend import ScriptedBackend

    from shiftbench.gen import rewrite
    from shiftbench.gen.backends import BACKENDS

    monkeypatch.setitem(BACKENDS, "scripted", "scripted_backend:ScriptedBackend")
    monkeypatch.setattr(ScriptedBackend, "calls", [])
    monkeypatch.setattr(ScriptedBackend, "prompts", [])
    monkeypatch.setattr(ScriptedBackend, "fail_from_call", None)
    monkeypatch.setattr(ScriptedBackend, "fail_once_after", None)
    monkeypatch.setattr(ScriptedBackend, "empty_for", set())
    monkeypatch.setattr(ScriptedBackend, "script", {})
    monkeypatch.setattr(rewrite.time, "sleep", lambda s: None)
    return ScriptedBackend


@pytest.fixture
def judgebot(monkeypatch: pytest.MonkeyPatch):
    """Register the word-overlap judge (see judge_backend.py) with a clean slate."""
    from judge_backend import JudgeBot

    from shiftbench.gen.backends import BACKENDS

    monkeypatch.setitem(BACKENDS, "judgebot", "judge_backend:JudgeBot")
    monkeypatch.setattr(JudgeBot, "prompts", [])
    monkeypatch.setattr(JudgeBot, "replies", {})
    return JudgeBot
