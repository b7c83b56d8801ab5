"""Importers: raters' files back into one canonical ratings table.

Four kinds of file, told apart by their content:
- the HTML form's CSV (columns batch_id, item_id, rater_id, criterion, rating);
- MTurk's batch results CSV, which Turkle writes too (WorkerId, SubmitTime, Input.* and
  Answer.<criterion>_<k> columns, one row per assignment);
- Label Studio's JSON export (tasks with their annotations' choices);
- Argilla's records JSON (`Dataset.records.to_json`, or records.json of `Dataset.to_disk`),
  told from Label Studio's by its records' `responses`.

Each rating becomes {batch_id, item_id, rater_id, criterion, rating, time, file}. Every
file is read whole and checked before anything is kept: a bad file is named with the line
(or, in JSON, the task) at fault: unknown item, a criterion the scheme lacks, a rating off
the scale, the same (item, rater, criterion) twice, missing columns, bytes that are not
UTF-8. Nothing from any file is written then.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from shiftbench.core.data.jsonfiles import wrong_unicode
from shiftbench.core.data.writes import atomic_write_text
from shiftbench.core.ratings import RATINGS_FILE, Rating
from shiftbench.core.records import BatchDescription
from shiftbench.core.tables import from_spreadsheet_cell
from shiftbench.errors import InputError

FORM_COLUMNS = ("batch_id", "item_id", "rater_id", "criterion", "rating")
# a character that is not text: NUL, a line or tab break, the C1 controls, a line separator
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


Record = tuple[str, dict[str, str]]  # (where, fields of one rating)


def _text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise wrong_unicode(path, data) or InputError(
            f"{path}: not UTF-8 text (byte {exc.start})"
        ) from None


def read_records(path: Path, criteria: list[str]) -> list[Record]:
    """Every rating in one file, as (where, {batch_id, item_id, rater_id, criterion,
    rating, time}) with the values as written."""
    text = _text(path)
    if path.suffix.lower() == ".json":
        try:
            tasks = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
        if not isinstance(tasks, list):
            raise InputError(
                f"{path}: a Label Studio or Argilla export is a JSON list of tasks or records"
            )
        if tasks and all(isinstance(t, dict) and "responses" in t for t in tasks):
            return _argilla(path, tasks)
        return _labelstudio(path, tasks)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
        if "WorkerId" in header or any(h.startswith("Input.") for h in header):
            return _mturk(path, reader, criteria)
        return _form(path, reader)
    except csv.Error as exc:  # a field past the csv module's size limit
        # the reader counts a line once it has parsed it: the fault is on the next one
        raise InputError(f"{path}:{reader.line_num + 1}: not a CSV row ({exc})") from None


def _form(path: Path, reader: csv.DictReader[str]) -> list[Record]:
    missing = [c for c in FORM_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{path}:1: missing column(s) {', '.join(missing)}")
    out = []
    for row in reader:
        # the form guards a value a spreadsheet would run as a formula with a leading '
        fields = {k: from_spreadsheet_cell((v or "").strip()) for k, v in row.items() if k}
        fields["time"] = fields.get("answered_at", "")
        out.append((f"{path}:{reader.line_num}", fields))
    return out


def _mturk(path: Path, reader: csv.DictReader[str], criteria: list[str]) -> list[Record]:
    header = reader.fieldnames or []
    slots = sorted(int(h.rsplit("_", 1)[1]) for h in header if h.startswith("Input.item_id_"))
    needed = ["WorkerId", "Input.batch_id", *(f"Answer.{c}_{k}" for k in slots for c in criteria)]
    missing = [c for c in needed if c not in header] or ([] if slots else ["Input.item_id_1"])
    if missing:
        raise InputError(f"{path}:1: missing column(s) {', '.join(missing)}")
    out = []
    for row in reader:
        where = f"{path}:{reader.line_num}"
        for k in slots:
            # the Input.* columns are batch.csv's, whose formula-like values have a leading '
            item = from_spreadsheet_cell((row.get(f"Input.item_id_{k}") or "").strip())
            if not item:  # the last HIT of a batch may hold fewer items
                continue
            for criterion in criteria:
                out.append(
                    (
                        where,
                        {
                            "batch_id": from_spreadsheet_cell(
                                (row.get("Input.batch_id") or "").strip()
                            ),
                            "item_id": item,
                            "rater_id": (row.get("WorkerId") or "").strip(),
                            "criterion": criterion,
                            "rating": (row.get(f"Answer.{criterion}_{k}") or "").strip(),
                            "time": (row.get("SubmitTime") or "").strip(),
                        },
                    )
                )
    return out


def _labelstudio(path: Path, tasks: list[Any]) -> list[Record]:
    out = []
    for number, task in enumerate(tasks, start=1):
        where = f"{path}: task {number}"
        data = task.get("data") if isinstance(task, dict) else None
        if not isinstance(data, dict) or "item_id" not in data or "batch_id" not in data:
            raise InputError(f"{where}: no data.batch_id and data.item_id")
        for annotation in task.get("annotations") or []:
            if annotation.get("was_cancelled"):
                continue
            who = annotation.get("completed_by")
            rater = who.get("email") or who.get("id") if isinstance(who, dict) else who
            for result in annotation.get("result") or []:
                choices = (result.get("value") or {}).get("choices") or [""]
                out.append(
                    (
                        where,
                        {
                            "batch_id": str(data["batch_id"]),
                            "item_id": str(data["item_id"]),
                            "rater_id": "" if rater is None else str(rater),
                            "criterion": str(result.get("from_name", "")),
                            "rating": str(choices[0]),
                            "time": str(annotation.get("created_at") or ""),
                        },
                    )
                )
    return out


def _argilla(path: Path, records: list[dict[str, Any]]) -> list[Record]:
    """Argilla records as `Dataset.records.to_json` (or `Dataset.to_disk`) writes them:
    each with metadata batch_id and item_id (or the id BATCH:ITEM shiftbench gave it) and
    responses {question: [{value, user_id}, ...]}. A response marked with a status other
    than submitted (a draft, a discarded one) is no rating."""
    out = []
    for number, record in enumerate(records, start=1):
        where = f"{path}: record {number}"
        meta = record.get("metadata") or {}
        batch, item = meta.get("batch_id"), meta.get("item_id")
        if (batch is None or item is None) and ":" in str(record.get("id") or ""):
            batch, item = str(record["id"]).split(":", 1)
        if batch is None or item is None:
            raise InputError(f"{where}: no metadata.batch_id and metadata.item_id")
        responses = record.get("responses") or {}
        if not isinstance(responses, dict):
            raise InputError(f"{where}: responses is not a mapping of questions")
        for question, answers in responses.items():
            for answer in answers or []:
                if not isinstance(answer, dict):
                    raise InputError(f"{where}: a {question} response is not an object")
                if answer.get("status", "submitted") != "submitted":
                    continue
                rater = answer.get("user_id")
                value = answer.get("value")
                out.append(
                    (
                        where,
                        {
                            "batch_id": str(batch),
                            "item_id": str(item),
                            "rater_id": "" if rater is None else str(rater),
                            "criterion": str(question),
                            "rating": "" if value is None else str(value),
                            "time": "",
                        },
                    )
                )
    return out


def canonical(
    files: list[Path], description: BatchDescription, table: list[dict[str, Any]],
    earlier: list[Rating] | None = None,
) -> list[Rating]:  # fmt: skip
    """Every rating of every file, checked against the batch; InputError on the first
    fault, naming file and line."""
    criteria = description["scheme"]["criteria"]
    known = {(r["batch_id"], r["item_id"]) for r in table}
    seen = {(r["item_id"], r["rater_id"], r["criterion"]): r["file"] for r in earlier or []}
    ratings: list[Rating] = []
    for path in files:
        for where, row in read_records(path, list(criteria)):
            batch, item, rater, criterion = (row[c] for c in FORM_COLUMNS[:4])
            if (batch, item) not in known:
                raise InputError(f"{where}: unknown item {item!r} in batch {batch!r}")
            if not rater:
                raise InputError(f"{where}: empty rater_id")
            control = _CONTROL.search(rater)
            if control is not None:  # it would end a line, or hide, in every report
                raise InputError(
                    f"{where}: rater_id {rater!r} holds the control character "
                    f"U+{ord(control[0]):04X}; a rater id is one line of visible text"
                )
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
                    "time": row.get("time") or None,
                    "file": path.name,
                }
            )
    return ratings


def write_ratings(folder: Path, ratings: list[Rating]) -> None:

    atomic_write_text(
        folder / RATINGS_FILE,
        "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in ratings),
    )
