"""An evaluate results folder's results.json, read by report, cards and compare alike:
its shape checked, and older files brought up to today's shape here, in one place."""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

from shiftbench import __version__
from shiftbench.core.data.runfolder import read_json
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
    for entry in document["models"]:
        for record in entry["results"]:
            if "prompt_variant" not in record and record.get("kind") != "original":
                found = PROMPT_IN_NAME.search(record["config"])
                record["prompt_variant"] = int(found.group(1)) if found else 1
    return cast(ResultsDocument, document)


def _release(version: str) -> tuple[int, int]:
    """A version's (major, minor); (0, 0) for one that does not start with them. Files of
    an older release are read (and brought up to date above); a newer one's may hold what
    this release cannot read."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)
