"""The automatic checks on one transformed config's rows: what each row fails, the
languages found in its outputs and its edit distances, and the config's summary of them
(validate's report gathers these per config and adds the measures)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

from shiftbench.core.data.runfolder import IDENTITY_KEPT, read_config_split
from shiftbench.core.records import ConfigRecord, DataRow, ExampleRecord, RunMeta
from shiftbench.core.text.checks import CHECKS, Case, failures
from shiftbench.core.text.langid import NOT_CHECKED, LanguageID, checkable
from shiftbench.core.text.scripts import tokens
from shiftbench.errors import InputError


def edit_distance(a: str, b: str) -> float:
    """Word-level Levenshtein distance over the longer text's word count (0: same words);
    in scripts written without spaces each character is a word (validate.scripts.tokens)."""
    wa, wb = tokens(a), tokens(b)
    longest = max(len(wa), len(wb))
    return Levenshtein.distance(wa, wb) / longest if longest else 0.0


@dataclass
class _Tally:
    """What the checks found over a config's rows so far, for its summary."""

    examples: int
    kept_identity: bool
    unchecked: Counter[str] = field(default_factory=Counter)  # fields per unknown language
    unchecked_rows: int = 0
    shown: dict[str, list[ExampleRecord]] = field(default_factory=lambda: {c: [] for c in CHECKS})
    counts: Counter[str] = field(default_factory=Counter)
    languages: Counter[str] = field(default_factory=Counter)
    distances: list[float] = field(default_factory=list)
    identical_rows: int = 0


def check_config(
    folder: Path,
    meta: RunMeta,
    name: str,
    identifier: LanguageID,
    examples: int,
) -> tuple[dict[str, Any], list[DataRow]]:
    """The config's summary, and its rows as read, each with its check results under
    `_result` (its line in validation/<config>.jsonl). Every split is read as evaluate
    reads it (runfolder.read_config_split), so validate passes no folder evaluate refuses."""
    config = meta["configs"][name]
    fields = meta["source"]["text_fields"]
    transform = config["transform"]
    rows = _read_rows(folder, meta, name, fields)
    detected = _detected_languages(identifier, rows, fields)
    tally = _Tally(examples, transform in IDENTITY_KEPT)
    for row in rows:
        _check_row(row, fields, transform, detected, tally)
    return _summary(config, transform, rows, tally), rows


def _read_rows(folder: Path, meta: RunMeta, name: str, fields: list[str]) -> list[DataRow]:
    """Every split's rows of the config, each marked with its split; refused when there
    are none, or when they hold sets of texts (nested clustering)."""
    config = meta["configs"][name]
    rows: list[DataRow] = []
    for split in sorted(config["rows"]):
        read = read_config_split(folder, meta, name, split, required=("row_id",))
        rows += [{"_split": split, **row} for row in read]
    if not rows:
        raise InputError(f"{folder / name} holds no rows")
    if any(isinstance(row.get(f), list) for row in rows for f in fields):  # nested clustering
        raise InputError(
            f"validate does not handle {meta['source']['task_type']} runs whose rows hold "
            f"sets of texts yet: {folder / name}'s {fields[0]} is a list"
        )
    return rows


def _detected_languages(
    identifier: LanguageID, rows: list[DataRow], fields: list[str]
) -> Iterator[str]:
    """The language found in each output field, row by row and field by field, in one
    call to language ID; NOT_CHECKED where it does not know the language wanted."""
    outputs = [str(row.get(f) or "") for row in rows for f in fields]
    wanted = [row.get(f"language_{f}") or None for row in rows for f in fields]
    judged = [i for i, lang in enumerate(wanted) if checkable(identifier, lang)]
    answers = identifier.detect([outputs[i] for i in judged], [wanted[i] for i in judged])
    found_at = dict(zip(judged, answers, strict=True))
    return iter(found_at.get(i, NOT_CHECKED) for i in range(len(outputs)))


def _check_row(
    row: DataRow, fields: list[str], transform: str, detected: Iterator[str], tally: _Tally
) -> None:
    """Runs the checks on each of the row's fields, counts them in `tally` and sets the
    row's `_result`."""
    failed: set[str] = set()
    unchanged = False
    row_detected, row_distance = {}, {}
    for field_ in fields:
        original = str(row.get(f"original_{field_}") or "")
        output = str(row.get(field_) or "")
        found = next(detected)
        if found == NOT_CHECKED:
            tally.unchecked[row.get(f"language_{field_}") or "unknown"] += 1
        case = Case(
            original,
            output,
            transform,
            row.get(f"language_{field_}") or None,
            None if found == NOT_CHECKED else found,
            row.get("finish_reason"),
        )
        field_failed = failures(case)
        if tally.kept_identity and "identical" in field_failed:
            field_failed.remove("identical")  # a result here, counted on its own
            unchanged = True
        failed.update(field_failed)
        row_detected[field_] = found
        row_distance[field_] = round(edit_distance(original, output), 4)
        tally.languages[found] += 1
        _show(row, field_, case, found, field_failed, tally)
    tally.counts.update(failed)
    tally.identical_rows += unchanged
    not_checked = NOT_CHECKED in row_detected.values()
    tally.unchecked_rows += not_checked
    tally.distances.append(sum(row_distance.values()) / len(row_distance))
    row["_result"] = {
        "split": row["_split"],
        "row_id": row.get("row_id"),
        # the texts beside their verdicts, so the file is read without a join
        "original": {f: str(row.get(f"original_{f}") or "") for f in fields},
        "output": {f: str(row.get(f) or "") for f in fields},
        "failed": [c for c in CHECKS if c in failed],
        **({"identical": unchanged} if tally.kept_identity else {}),
        **({"not_checked": ["wrong-language"]} if not_checked else {}),
        "edit_distance": row_distance,
        "detected_language": row_detected,
    }


def _show(
    row: DataRow, field_: str, case: Case, found: str, failed: list[str], tally: _Tally
) -> None:
    """Keeps the field as an example of each check it fails, up to `tally.examples`."""
    for check in failed:
        if len(tally.shown[check]) < tally.examples:
            tally.shown[check].append(
                {
                    "split": row["_split"],
                    "row_id": row.get("row_id"),
                    "field": field_,
                    "original": case.source,
                    "output": case.output,
                    "language": case.language,
                    "detected": found,
                    "finish_reason": case.finish_reason,
                }
            )


def _summary(
    config: ConfigRecord, transform: str, rows: list[DataRow], tally: _Tally
) -> dict[str, Any]:
    """The config's summary in validation.json: its counts and rates per check."""
    n = len(rows)
    counts = tally.counts
    failed_rows = sum(1 for row in rows if row["_result"]["failed"])
    return {
        "transform": transform,
        "axis": config.get("axis"),
        "seed": config.get("seed"),
        "model": m.get("id") if (m := config.get("model")) else None,
        "settings_sha256": config.get("settings_sha256"),
        "rows": n,
        "error_counts": {c: counts[c] for c in CHECKS},
        "error_rates": {c: round(counts[c] / n, 4) for c in CHECKS},
        "failed_rows": failed_rows,
        "total_error_rate": round(failed_rows / n, 4),
        # rows with a field equal to its input, where that is a result (back-translation)
        **(
            {
                "identical_rows": tally.identical_rows,
                "identical_rate": round(tally.identical_rows / n, 4),
            }
            if tally.kept_identity
            else {}
        ),
        "mean_edit_distance": round(sum(tally.distances) / n, 4),
        "detected_languages": dict(sorted(tally.languages.items(), key=lambda kv: (-kv[1], kv[0]))),
        # rows whose language ID could not judge a field, and those fields' languages
        "not_checked": {"wrong-language": tally.unchecked_rows},
        "unchecked_languages": dict(sorted(tally.unchecked.items())),
        "examples": {c: tally.shown[c] for c in CHECKS if tally.shown[c]},
    }
