"""Automatic error checks: one small function per failure, no LLM needed.

A check takes the input text, the output text and the transform's name, and answers
whether the output fails it. gen regenerates outputs that fail the checks in GEN_CHECKS;
validate reports every check. Marker lists are data (markers.json) and can be extended
with a user's own file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path

Check = Callable[[str, str, str], bool]

LONGER_BY_DESIGN = ("expansion", "summarised-expansion")
RUNAWAY_FACTOR = 5


@cache
def markers(extra: str | None = None) -> dict[str, tuple[str, ...]]:
    """Lower-cased marker phrases per kind, all languages together, plus a user's file."""
    text = resources.files("shiftbench.validate").joinpath("markers.json").read_text("utf-8")
    tables = [json.loads(text)]
    if extra is not None:
        tables.append(json.loads(Path(extra).read_text(encoding="utf-8")))
    merged: dict[str, set[str]] = {}
    for table in tables:
        for kind, by_language in table.items():
            for phrases in by_language.values():
                merged.setdefault(kind, set()).update(p.lower() for p in phrases)
    return {kind: tuple(sorted(phrases)) for kind, phrases in merged.items()}


def empty(source: str, output: str, transform: str) -> bool:
    return not output.strip()


def identical(source: str, output: str, transform: str) -> bool:
    return bool(output.strip()) and output.strip().lower() == source.strip().lower()


def reasoning_leak(source: str, output: str, transform: str) -> bool:
    lowered = output.lower()
    return any(marker in lowered for marker in markers()["reasoning"])


def prefix_leak(source: str, output: str, transform: str) -> bool:
    lowered = output.strip().lower()
    source_lowered = source.strip().lower()
    return any(
        lowered.startswith(marker) and not source_lowered.startswith(marker)
        for marker in markers()["prefix"]
    )


def runaway(source: str, output: str, transform: str) -> bool:
    if transform in LONGER_BY_DESIGN:
        return False
    return len(output.split()) > RUNAWAY_FACTOR * max(1, len(source.split()))


CHECKS: dict[str, Check] = {
    "empty": empty,
    "identical": identical,
    "reasoning-leak": reasoning_leak,
    "prefix-leak": prefix_leak,
    "runaway": runaway,
}
GEN_CHECKS = ("empty", "identical", "reasoning-leak", "prefix-leak", "runaway")


def first_failure(source: str, output: str, transform: str, names: tuple[str, ...]) -> str | None:
    """The name of the first check in `names` that the output fails, or None."""
    return next((name for name in names if CHECKS[name](source, output, transform)), None)
