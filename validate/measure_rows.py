"""The measurement of the checks as validate/measured.json holds it (`measure.py` makes
it): its settings, one row per check's false alarms and one per check's misses."""

from __future__ import annotations

from typing import Required, TypedDict


class FalseAlarmRow(TypedDict, total=False):
    """One check on one dataset and language's unchanged texts (or paraphrase pairs)."""

    check: Required[str]
    dataset: Required[str]
    language: Required[str]
    data: Required[str]  # texts, pairs, or texts with no input
    measured: Required[bool]
    texts: int
    alarms: int
    rate: float
    why: str  # why it was not measured


class MissRow(TypedDict, total=False):
    """One check against one kind of planted failure on one dataset and language."""

    check: Required[str]
    kind: Required[str]
    held_out: Required[bool | None]
    dataset: Required[str]
    language: Required[str]
    measured: Required[bool]
    planted: int
    missed: int
    rate: float
    missed_by_all: int
    why: str


class MeasureSettings(TypedDict):
    command: str
    cap: int
    plant_cap: int
    seed: int
    language_id: str
    paraphrase_share: float
    goal: dict[str, float]
    datasets: list[str]
    not_measured: dict[str, str]


class Measurement(TypedDict, total=False):
    """validate/measured.json (empty when the package holds none)."""

    format: int
    settings: MeasureSettings
    false_alarms: list[FalseAlarmRow]
    misses: list[MissRow]
