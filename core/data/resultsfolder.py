"""An evaluate results folder's results.json, read by report, leaderboard, cards and
compare alike: its shape and its values checked, and older files brought up to today's
shape here, in one place."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from shiftbench import __version__
from shiftbench.core.data.jsonfiles import read_json
from shiftbench.core.data.names import is_safe_name
from shiftbench.core.records import ResultsDocument
from shiftbench.errors import InputError

RESULTS_FILE = "results.json"
# a variant's prompt in its config name: paraphrase-p2-s1, paraphrase-p2-s1.de
PROMPT_IN_NAME = re.compile(r"-p(\d+)-s[^-.]+(?:\.|$)")


def read_results(path: Path, missing: str | None = None) -> ResultsDocument:
    """The results document of a folder (or its results.json itself). A record written
    before records carried their prompt variant gets it from its config name (1 without
    a `-pN`). `missing`: the message when there is no file."""
    file = path / RESULTS_FILE if path.is_dir() else path
    missing = missing or f"{path} is not an evaluate results folder (no {RESULTS_FILE})"
    document = read_json(file, missing=missing)
    if not isinstance(document, dict) or "models" not in document or "target" not in document:
        raise InputError(f"{path} is not an evaluate results folder (no models or target)")
    if not isinstance(document.get("source"), dict):
        raise InputError(f"{path} is not an evaluate results folder (no source object)")
    written = str(document.get("shiftbench_version", ""))
    if _release(written) > _release(__version__):
        raise InputError(
            f"{file} was written by shiftbench {written}, newer than this one "
            f"({__version__}); read it with shiftbench {written} or later"
        )
    check_values(document, file)
    for entry in document["models"]:
        for record in entry["results"]:
            if "prompt_variant" not in record and record.get("kind") != "original":
                found = PROMPT_IN_NAME.search(record["config"])
                record["prompt_variant"] = int(found.group(1)) if found else 1
    return cast(ResultsDocument, document)


KINDS = ("original", "transform", "control")  # records.ConfigKind
FINITE = "a finite number"
SAFE = "a safe name (letters, digits and . _ - +, a letter or digit first)"
FINITE_OR_NULL = "a finite number or null"


def check_values(document: dict[str, object], file: Path) -> None:
    """Every model and record of a results document holds what its readers compute with
    (the fields evaluate writes: results.results_document and records.ScoreRecord): a
    fault is an InputError naming the file and the key path, so a hand-edited or spoilt
    file is one line rather than `nan` in a table or a raw KeyError."""

    def fail(key: str, must: str, value: Any = ...) -> InputError:
        if value is ...:
            return InputError(f"{file}: {key} is missing (it must be {must})")
        return InputError(f"{file}: {key} must be {must}, not {_shown(value)}")

    for key in ("target", "task_type", "main_score"):
        if not isinstance(document.get(key), str):
            raise fail(key, "a name", document.get(key, ...))
    models = document["models"]
    if not isinstance(models, list):
        raise fail("models", "a list of models", models)
    for m, entry in enumerate(models):
        at = f"models[{m}]"
        if not isinstance(entry, dict):
            raise fail(at, "an object", entry)
        model = entry.get("model", ...)
        if not isinstance(model, dict):
            raise fail(f"{at}.model", "an object", model)
        if not isinstance(model.get("id"), str) or not model["id"]:
            raise fail(f"{at}.model.id", "a model name", model.get("id", ...))
        records = entry.get("results", ...)
        if not isinstance(records, list):
            raise fail(f"{at}.results", "a list of records", records)
        for r, record in enumerate(records):
            _check_record(record, f"{at}.results[{r}]", fail)


def _check_record(record: Any, at: str, fail: Callable[..., InputError]) -> None:
    if not isinstance(record, dict):
        raise fail(at, "an object", record)
    for key in ("config", "split", "subset"):  # names as a run folder's (names.py)
        if not is_safe_name(record.get(key)):
            raise fail(f"{at}.{key}", SAFE, record.get(key, ...))
    if record.get("kind") not in KINDS:
        raise fail(f"{at}.kind", "one of " + ", ".join(KINDS), record.get("kind", ...))
    if record["kind"] == "transform":  # what the report groups a variant by
        for key in ("transform", "axis"):
            if not isinstance(record.get(key), str) or not record[key]:
                raise fail(f"{at}.{key}", "a name", record.get(key, ...))
        seed = record.get("seed", ...)
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise fail(f"{at}.seed", "an integer or null", seed)
    if not _finite(record.get("main_score")):
        raise fail(f"{at}.main_score", FINITE, record.get("main_score", ...))
    for key in ("original_same_rows", "delta"):
        if record.get(key) is not None and not _finite(record[key]):
            raise fail(f"{at}.{key}", FINITE_OR_NULL, record[key])
    ci = record.get("ci95")
    if ci is not None:
        if not isinstance(ci, list) or len(ci) != 2:
            raise fail(f"{at}.ci95", "null or a list of two finite numbers", ci)
        for end, value in enumerate(ci):
            if not _finite(value):
                raise fail(f"{at}.ci95[{end}]", FINITE, value)
    for key in ("rows", "rows_total"):
        value = record.get(key, ... if key == "rows" else 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise fail(f"{at}.{key}", "a count of rows", value)
    draws = record.get("delta_replicates")
    if draws is not None:
        if not isinstance(draws, list):
            raise fail(f"{at}.delta_replicates", "null or a list", draws)
        for number, value in enumerate(draws):
            if value is not None and not _finite(value):
                raise fail(f"{at}.delta_replicates[{number}]", FINITE_OR_NULL, value)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value: Any) -> str:
    """A JSON value as a message names it: NaN, Infinity, null, true, a string ("x")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value is None:
        return "null"
    if isinstance(value, str):
        text = value if len(value) <= 20 else value[:20] + "..."
        return f"a string ({text!r})"
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return "an object"


def _release(version: str) -> tuple[int, int]:
    """A version's (major, minor); (0, 0) for one that does not start with them. Files of
    an older release are read (and brought up to date above); a newer one's may hold what
    this release cannot read."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)
