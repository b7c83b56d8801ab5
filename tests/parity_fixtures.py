"""Session fixtures for the parity tests (evaluate against mteb and against independent
computations, with the real encoder on real data): work that several tests need is done
once per session, and once per worker under pytest-xdist. Tests that share one of these
across modules carry the same xdist group, so that one worker does the work.

Loaded by tests/conftest.py (`pytest_plugins`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def embedding_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One on-disk embedding store (evaluate's --cache-dir) for tests that do not test the
    cache: a text the real encoder embedded for one test is read back in the next, not
    embedded again. Tests of the cache itself keep their own empty stores."""
    return tmp_path_factory.mktemp("embedding-store")


@dataclass(frozen=True)
class Evaluated:
    """What one `shiftbench evaluate` wrote and printed."""

    folder: Path
    stdout: str


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory: pytest.TempPathFactory):
    """`evaluated(*args)`: the results of `shiftbench evaluate *args -o FOLDER`, run once
    per session for each distinct argument list, with caches of its own, as a test would
    run it. Tests read the results folder and never change it (copy it to change it)."""
    from click.testing import CliRunner
    from conftest import isolate

    from shiftbench.cli import cli

    done: dict[tuple[str, ...], Evaluated] = {}

    def run(*args: object) -> Evaluated:
        key = tuple(str(a) for a in args)
        if key not in done:
            base = tmp_path_factory.mktemp("evaluated")
            with pytest.MonkeyPatch.context() as monkeypatch:
                isolate(monkeypatch, base / "cache")
                result = CliRunner().invoke(
                    cli, ["evaluate", *key, "-o", str(base / "results")], catch_exceptions=False
                )
            assert result.exit_code == 0, result.output
            done[key] = Evaluated(base / "results", result.stdout)
        return done[key]

    return run
