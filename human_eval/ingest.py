"""Importers: raters' files back into one canonical ratings table.

Each rating becomes {batch_id, item_id, rater_id, criterion, rating, time, file}. A file is
read whole and checked before anything is kept: a bad file is named with the line at
fault (unknown item, a criterion the scheme lacks, a rating off the scale, the same
(item, rater, criterion) twice, missing columns, bytes that are not UTF-8), and nothing
from any file is written.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from shiftbench.errors import InputError

RATINGS_FILE = "ratings.jsonl"
FORM_COLUMNS = ("batch_id", "item_id", "rater_id", "criterion", "rating")


def read_form_csv(path: Path) -> list[tuple[int, dict[str, str]]]:
    """(line number, row) for each data row of a CSV the HTML form downloaded."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in FORM_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{path}:1: missing column(s) {', '.join(missing)}")
    rows = []
    for row in reader:
        rows.append((reader.line_num, {k: (v or "").strip() for k, v in row.items() if k}))
    return rows


def canonical(
    files: list[Path], description: dict[str, Any], table: list[dict[str, Any]],
    earlier: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Every rating of every file, checked against the batch; InputError on the first
    fault, naming file and line."""
    criteria = description["scheme"]["criteria"]
    known = {(r["batch_id"], r["item_id"]) for r in table}
    seen = {(r["item_id"], r["rater_id"], r["criterion"]): r["file"] for r in earlier or []}
    ratings: list[dict[str, Any]] = []
    for path in files:
        for line, row in read_form_csv(path):
            where = f"{path}:{line}"
            batch, item, rater, criterion = (row[c] for c in FORM_COLUMNS[:4])
            if (batch, item) not in known:
                raise InputError(f"{where}: unknown item {item!r} in batch {batch!r}")
            if not rater:
                raise InputError(f"{where}: empty rater_id")
            if criterion not in criteria:
                raise InputError(
                    f"{where}: unknown criterion {criterion!r}; the scheme has "
                    f"{', '.join(criteria)}"
                )
            scale = criteria[criterion]["scale"]
            try:
                value = float(row["rating"])
            except ValueError:
                value = None
            if value is None or value not in scale:
                raise InputError(
                    f"{where}: rating {row['rating']!r} is not on the {criterion} scale "
                    f"({', '.join(str(p) for p in scale)})"
                )
            key = (item, rater, criterion)
            if key in seen:
                raise InputError(
                    f"{where}: a second {criterion} rating of {item!r} by {rater!r} "
                    f"(the first is in {seen[key]})"
                )
            seen[key] = str(path)
            ratings.append(
                {
                    "batch_id": batch,
                    "item_id": item,
                    "rater_id": rater,
                    "criterion": criterion,
                    "rating": int(value) if value.is_integer() else value,
                    "time": row.get("answered_at") or None,
                    "file": path.name,
                }
            )
    return ratings


def read_ratings(folder: Path) -> list[dict[str, Any]]:
    path = folder / RATINGS_FILE
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def write_ratings(folder: Path, ratings: list[dict[str, Any]]) -> None:
    path = folder / RATINGS_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(
        "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in ratings),
        encoding="utf-8",
    )
    tmp.replace(path)
