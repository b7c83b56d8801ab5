"""What a dataset card says about a run, worked out from its files: the source's place,
license and languages, the size category, the validation and human-eval reports read and
summarised, the citation."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from shiftbench import __version__
from shiftbench.core.data.runcard import made_by
from shiftbench.core.data.runfolder import (
    read_validation,
)
from shiftbench.core.ratings import read_batch, read_human_report
from shiftbench.core.records import RunMeta, SourceRecord, ValidationReport
from shiftbench.core.text.languages import get_language
from shiftbench.errors import InputError

# The Hub's task categories for mteb task types.
TASK_CATEGORIES = {
    "STS": "sentence-similarity",
    "Retrieval": "text-retrieval",
    "Reranking": "text-ranking",
    "Classification": "text-classification",
    "Clustering": "text-classification",
    "PairClassification": "text-classification",
    "Summarization": "summarization",
}
# License ids the Hub knows that MTEB sources use; anything else becomes `other`.
HUB_LICENSES = {
    "apache-2.0", "mit", "afl-3.0", "bsd-2-clause", "bsd-3-clause", "cc0-1.0", "cc-by-2.0",
    "cc-by-2.5", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-2.0",
    "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0",
    "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0", "odc-by", "odbl", "pddl", "gpl-2.0", "gpl-3.0",
    "lgpl-3.0", "agpl-3.0", "mpl-2.0", "openrail", "c-uda", "cdla-permissive-2.0",
    "cdla-sharing-1.0", "unlicense", "wtfpl", "artistic-2.0", "ecl-2.0", "epl-2.0",
}  # fmt: skip


def source_dataset(source: SourceRecord) -> str | None:
    """The source's Hub repository, or None for a local folder (whose path stays private)."""
    return str(source["dataset_path"]) if source.get("mteb_task") else None


def source_place(source: SourceRecord, markdown: bool = False) -> str:
    """Where the source rows come from: the Hub dataset at its revision, or a local folder
    by name and content hash (names in backticks when `markdown`)."""
    origin = source_dataset(source)
    q = "`" if markdown else ""
    if origin:
        return f"{q}{origin}{q} at revision {q}{source['revision']}{q}"
    return (
        f"a local {source['task_type']} dataset folder named {q}{source['name']}{q} (content "
        f"hash {q}{source['revision']}{q})"
    )


def summary(meta: RunMeta, markdown: bool = False) -> str:
    """What the release is, in one paragraph (the card's first, Croissant's description)."""
    source = meta["source"]
    where = source_place(source, markdown)
    if source_dataset(source):  # a Hub dataset is named by its place; a folder names itself
        where = f"the {source['task_type']} dataset {where}"
    return (
        f"{made_by(meta, 'LLM-rewritten variants')} of {where}, for measuring "
        "how much of a text-embedding model's score survives when the benchmark's texts are "
        "reworded, resized or translated. Made with shiftbench "
        f"{meta.get('shiftbench_version', __version__)}."
    )


def hub_license(source_license: str | None) -> tuple[str, str | None]:
    """(license id for the YAML, a note when the source's license is not a Hub id)."""
    value = (source_license or "").strip().lower()
    if value in HUB_LICENSES:
        return value, None
    if not value or value in ("not specified", "unknown"):
        return "other", "The source dataset does not state a license."
    return "other", f"The license is given as `{source_license}`, which is not a Hub license id."


def size_category(rows: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if rows < limit:
            return name
    for limit, name in ((1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if rows < limit:
            return name
    return "10M<n<100M"


def _iso1(mteb_code: str) -> str:
    """`eng-Latn` → `en` (the Hub's language codes); unknown codes stay ISO 639-3."""
    try:
        return get_language(mteb_code).code
    except InputError:
        return mteb_code.split("-")[0]


def source_languages(source: SourceRecord) -> list[str]:
    """mteb's language codes of the subsets the run used (not of every subset)."""
    per_subset = source.get("languages", {})
    used = source.get("subsets") or list(per_subset)
    return sorted({c for subset in used for c in per_subset.get(subset, [])})


def languages(meta: RunMeta) -> tuple[list[str], str]:
    """The card's languages and its multilinguality."""
    found = {_iso1(c) for c in source_languages(meta["source"])}
    translated = False
    for info in meta["configs"].values():
        targets = info.get("target_languages") or []
        found.update(targets)
        translated = translated or bool(targets)
    if translated:
        return sorted(found), "translation"
    return sorted(found), "multilingual" if len(found) > 1 else "monolingual"


def validation_report(folder: Path) -> ValidationReport | None:
    """The run folder's validation.json, when it was validated."""
    return read_validation(folder)


def human_reports(folders: tuple[Path, ...]) -> list[dict[str, Any]]:
    """Each batch folder's report, with the languages its rated items are in."""
    reports = []
    for folder in folders:
        doc = read_human_report(folder)
        if doc is None:
            raise InputError(
                f"{folder} holds no human-eval report; run 'shiftbench human-eval report "
                f"{folder}' first"
            )
        _, items = read_batch(folder)
        langs: Counter[str] = Counter()
        for item in items:
            if not item.get("is_control") and item.get("language"):
                langs[item["language"]] += 1
        reports.append(
            {"name": folder.name, "report": doc, "languages": dict(sorted(langs.items()))}
        )
    return reports


def human_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """What a release keeps of a human-eval report: figures, not rater ids or local paths."""
    doc = entry["report"]
    return {
        "format": 1,
        "batch": entry["name"],
        "scheme": doc.get("scheme"),
        "threshold": doc.get("threshold"),
        "weights": doc.get("weights"),
        "raters_kept": len(doc.get("kept_raters", [])),
        "raters_excluded": len(doc.get("excluded_raters", [])),
        "languages": entry["languages"],
        "rows": doc.get("rows", []),
        "drift_correlation": doc.get("drift_correlation"),
    }
