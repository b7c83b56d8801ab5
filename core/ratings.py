"""Human ratings on disk: a batch's files, their checked readers, and rater screening.

human_eval writes these files; evaluate's `--faithful` filter and the card read them. The
screening rule belongs with the files because it is fixed before anyone rates: a rater is
kept when they rated at least one control item and every control rating lies within that
item's tolerance of its expected value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Required, TypedDict, cast

from shiftbench.core.data.jsonfiles import read_json, read_jsonl
from shiftbench.core.data.runfolder import read_report
from shiftbench.core.messages import counted
from shiftbench.core.records import BatchDescription, HumanEvalReport
from shiftbench.errors import InputError

BATCH_FILE = "batch.json"  # the batch's description: run, scheme, criteria, seed
ITEMS_FILE = "items.jsonl"  # one row per item to rate, controls included
RATINGS_FILE = "ratings.jsonl"  # every imported rating, one per line
HUMAN_REPORT = "human_eval.json"  # what `human-eval report` writes
ITEM_FIELDS = ("item_id", "is_control")
RATING_FIELDS = ("batch_id", "item_id", "rater_id", "criterion", "rating")


class Rating(TypedDict, total=False):
    """One line of a batch's ratings.jsonl: one rater's rating of one item on one
    criterion, and the file it was imported from."""

    batch_id: Required[str]
    item_id: Required[str]
    rater_id: Required[str]
    criterion: Required[str]
    rating: Required[float]
    time: str | None
    file: str


class ControlMiss(TypedDict):
    """A rating of a control item outside its tolerance."""

    item_id: str
    criterion: str
    rating: float
    expected: float


class RaterScreening(TypedDict, total=False):
    """One rater's screening on the control items: kept, or why not."""

    controls: Required[int]  # control ratings given
    misses: Required[list[ControlMiss]]
    kept: Required[bool]
    reason: str


def read_batch(folder: Path) -> tuple[BatchDescription, list[dict[str, Any]]]:
    """A batch folder's description and its items."""
    path = folder / BATCH_FILE
    missing = f"{folder} holds no batch ({BATCH_FILE}); run 'human-eval batch'"
    description = read_json(path, missing=missing)
    if not isinstance(description, dict):
        raise InputError(f"{path}: must hold one JSON object (the batch's description)")
    # a batch's id names its form (BATCH.html), an item's id the config whose per-row
    # validation results it is matched with (RUN/validation/CONFIG.jsonl)
    items = read_jsonl(
        folder / ITEMS_FILE, required=ITEM_FIELDS, values={"batch_id": "name", "item_id": "item"}
    )
    return cast(BatchDescription, description), items


def read_human_report(folder: Path) -> HumanEvalReport | None:
    """A batch folder's human_eval.json (its shape checked); None before `human-eval
    report` has run."""
    found = read_report(folder / HUMAN_REPORT, "the human-eval report")
    return cast("HumanEvalReport | None", found)


def read_ratings(folder: Path) -> list[Rating]:
    """The ratings imported into a batch folder so far (none before the first import)."""
    found = read_jsonl(folder / RATINGS_FILE, required=RATING_FIELDS, missing_ok=True)
    return cast(list[Rating], found)


def screen(table: list[dict[str, Any]], ratings: list[Rating]) -> dict[str, RaterScreening]:
    """rater -> {kept, controls rated, misses [(item, criterion, rating, expected)]}."""
    controls = {r["item_id"]: r for r in table if r["is_control"]}
    raters: dict[str, RaterScreening] = {}
    for r in ratings:
        entry = raters.setdefault(r["rater_id"], {"controls": 0, "misses": [], "kept": False})
        control = controls.get(r["item_id"])
        if control is None:
            continue
        entry["controls"] += 1
        expected = control["expected"][r["criterion"]]
        if abs(r["rating"] - expected) > control["tolerance"]:
            entry["misses"].append(
                {
                    "item_id": r["item_id"],
                    "criterion": r["criterion"],
                    "rating": r["rating"],
                    "expected": expected,
                }
            )
    for entry in raters.values():
        entry["kept"] = entry["controls"] > 0 and not entry["misses"]
        if not entry["controls"]:
            entry["reason"] = "rated no control items"
        elif entry["misses"]:
            entry["reason"] = (
                f"{counted(len(entry['misses']), 'control rating')} outside the tolerance"
            )
    return dict(sorted(raters.items()))
