"""Shared by the control tests: the rules' known sentences and a gen of the controls
without a generator."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from shiftbench.core.text.transforms import CONTROLS

RULES = [name for name, t in CONTROLS.items() if t.rule]
# openai at a port nothing listens on: a rule-only run must never reach for a generator
NO_GENERATOR = ["-b", "openai", "--base-url", "http://127.0.0.1:9/v1"]


def _gen(runner: CliRunner, *args) -> str:
    from shiftbench.cli import cli

    result = runner.invoke(cli, ["gen", *map(str, args)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _mrpc(shared_data: Path) -> list:
    return [shared_data / "MRPC", "--task-type", "PairClassification", "--source-language", "en"]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.*"))}
