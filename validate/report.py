"""`shiftbench validate`: every automatic check on every transformed row of a run folder,
plus the measures a user asks for (embedding drift, LLM judges, paraphrase likelihood).

For each transformed config it counts, per check, the rows with at least one failing text
field, and the total error rate (a row counts once however many checks it fails); the
mean normalised word-level edit distance between original and output (each character a
word in scripts written without spaces); the languages found in the outputs, and how many
rows the wrong-language check could not judge because language ID does not know the
language a field should be in (`not_checked`; such rows are not failures); a few example
failures per check; and for each measure, its mean and SD over the text fields it could
score, with the count and reasons of those it could not. It writes `validation.json` (for
machines: the dataset card and the release step read it), `validation.md` (for people) and
`validation/<config>.jsonl` (per row: its original and output texts, failed checks, edit
distance, detected languages, measure values and judge replies) into the run folder.
validation.md lists the worst rows: those of largest drift, and an example of each failure.

A measure's results for a config carry over to later reports as long as the config is
unchanged, so judges can be added one run of the command at a time.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, cast

from shiftbench import __version__
from shiftbench.core.data.jsonfiles import read_jsonl
from shiftbench.core.data.listfields import refuse_listed
from shiftbench.core.data.names import inside
from shiftbench.core.data.runfolder import (
    VALIDATION_REPORT,
    read_meta,
    read_validation,
)
from shiftbench.core.data.writes import atomic_write_text
from shiftbench.core.progress import bar
from shiftbench.core.records import (
    ConfigValidationRecord,
    DataRow,
    RunMeta,
    ValidationReport,
)
from shiftbench.core.text.checks import CHECKS
from shiftbench.core.text.langid import (
    EXPECTED_SHARE,
    MIN_LETTERS,
    LanguageID,
)
from shiftbench.core.text.scripts import DENSE_WEIGHT
from shiftbench.core.text.transforms import instruction
from shiftbench.errors import InputError
from shiftbench.llm.cache import GenerationCache
from shiftbench.validate.judge import Item
from shiftbench.validate.meaning import MEANING_CHANGED, MeaningCheck
from shiftbench.validate.report_text import (
    SHOWN_CHARS,
    WORST_DRIFT,
    decisions,
    quote,
    validation_markdown,
)
from shiftbench.validate.rowchecks import check_config

REPORT_JSON = VALIDATION_REPORT
REPORT_MD = "validation.md"
ROWS_DIR = "validation"


class Measure(Protocol):
    """A per-pair score beyond the checks: embedding drift, an LLM judge, ParaPLUIE."""

    key: str  # "<kind>:<what scores>", unique within a report

    def describe(self) -> dict[str, Any]:
        """What produced the values (kind, model, prompt hash, settings)."""

    def score(
        self, items: list[Item], cache: GenerationCache, *, quiet: bool = True, label: str = ""
    ) -> list[tuple[float | None, str | None, str | None]]:
        """(value or None, the model's reply if any, why there is no value) per item."""


def plan(folder: Path, configs: tuple[str, ...] = ()) -> tuple[RunMeta, list[str]]:
    """The run's metadata and the transformed configs to check (all when none are named);
    a one-line InputError for anything that is not there."""
    meta = read_meta(folder)
    refuse_listed(meta["source"], "validate")
    rows_folder(folder)  # refused now, not after the checks have run
    available = [n for n, c in meta["configs"].items() if c.get("kind") == "transform"]
    controls = [n for n, c in meta["configs"].items() if c.get("kind") == "control"]
    unknown = [c for c in configs if c not in available]
    if unknown and unknown[0] in controls:
        raise InputError(f"{unknown[0]} {_CONTROLS_ELSEWHERE.format(folder=folder)}")
    if unknown:
        raise InputError(
            f"{folder} has no transformed config {unknown[0]!r}; available: "
            f"{', '.join(available) or 'none'}"
        )
    chosen = list(dict.fromkeys(configs)) or available
    if not chosen and controls:
        raise InputError(
            f"{folder} holds controls only ({', '.join(controls)}); each "
            + _CONTROLS_ELSEWHERE.format(folder=folder)
        )
    if not chosen:
        raise InputError(f"{folder} has no transformed configs to validate")
    return meta, chosen


# Controls are made by rules, so validate's checks (which look for what an LLM gets wrong)
# have nothing to find in them; their effect on meaning is what probe measures.
_CONTROLS_ELSEWHERE = (
    "is a rule-based control, which validate does not check (its checks look for what an "
    "LLM gets wrong); a control's effect on meaning is measured by 'shiftbench probe {folder} "
    "-m MODEL'"
)


def over_meaning_limit(report: ValidationReport, limit: float) -> list[tuple[str, float]]:
    """Configs whose meaning-changed rate exceeds `limit` (configs not checked for meaning
    never do)."""
    return [
        (name, m["changed_rate"])
        for name, c in report["configs"].items()
        if (m := c.get("meaning")) and m.get("checked_rows") and m["changed_rate"] > limit
    ]


def over_limit(report: ValidationReport, limit: float) -> list[tuple[str, float]]:
    """Configs whose total error rate exceeds `limit`."""
    return [
        (name, c["total_error_rate"])
        for name, c in report["configs"].items()
        if c["total_error_rate"] > limit
    ]


def validate_run(
    folder: Path,
    identifier: LanguageID,
    *,
    configs: tuple[str, ...] = (),
    examples: int = 3,
    measures: tuple[Measure, ...] = (),
    cache: GenerationCache | None = None,
    quiet: bool = True,
    meaning: MeaningCheck | None = None,
) -> ValidationReport:
    """Check every transformed config of the run folder, judge its meaning (`meaning`: the
    default meaning check, None for none), score it with each measure, and write the
    reports into it (validation.json's document is returned)."""
    meta, chosen = plan(folder, configs)
    fields = meta["source"]["text_fields"]
    report: dict[str, Any] = {
        "format": 1,
        "shiftbench_version": __version__,
        "language_id": {
            "name": identifier.name,
            "min_letters": MIN_LETTERS,
            "dense_weight": DENSE_WEIGHT,
            "expected_share": EXPECTED_SHARE,
            "languages": sorted(identifier.languages),
        },
        "checks": list(CHECKS),
        "configs": {},
    }
    per_row: dict[str, list[DataRow]] = {}
    # one step per config for the automatic checks, and one per config and measure; a
    # judge's own count of pairs shows beside it
    steps = len(chosen) * (1 + len(measures))
    with bar(steps, f"validate {folder.name}", unit="check", quiet=quiet) as progress:
        for name in chosen:
            summary, rows = check_config(folder, meta, name, identifier, examples)
            if meaning is not None:
                _meaning_config(summary, rows, fields, meaning, examples)
            progress.update()
            if measures:
                _measure_config(
                    summary, rows, fields, measures, cache or GenerationCache(None),
                    quiet=quiet, label=f"{folder.name}/{name}", done=progress.update,
                )  # fmt: skip
            report["configs"][name] = summary
            per_row[name] = [row["_result"] for row in rows]
    _keep_earlier(folder, meta, report, per_row)
    document = cast(ValidationReport, report)
    _write(folder, document, per_row, meta)
    return document


def _keep_earlier(
    folder: Path,
    meta: RunMeta,
    report: dict[str, Any],
    per_row: dict[str, list[DataRow]],
) -> None:
    """Carry over an earlier report's results that this run did not recompute, as long as
    the config is unchanged (same settings): measures of the configs checked now, and (when
    the same language ID judged them) whole configs not checked this time."""
    try:
        earlier = read_validation(folder)
    except InputError:  # unreadable: there is nothing to carry over, and it is replaced
        return
    if earlier is None:
        return
    checked = report["configs"]
    for name, summary in checked.items():
        before = earlier.get("configs", {}).get(name)
        if before is None or before.get("settings_sha256") != summary["settings_sha256"]:
            continue
        _keep_earlier_measures(folder, name, before, summary, per_row[name])
    if earlier.get("language_id") != report["language_id"]:
        return
    kept = {}
    for name, summary in earlier.get("configs", {}).items():
        config = meta["configs"].get(name)
        if name in checked or config is None:
            continue
        if summary.get("settings_sha256") == config.get("settings_sha256"):
            kept[name] = summary
    order = [n for n in meta["configs"] if n in checked or n in kept]
    report["configs"] = {n: checked[n] if n in checked else kept[n] for n in order}


def _keep_earlier_measures(
    folder: Path,
    name: str,
    before: ConfigValidationRecord,
    summary: dict[str, Any],
    rows: list[DataRow],
) -> None:
    missing = [k for k in before.get("measures", {}) if k not in summary.get("measures", {})]
    if not missing:
        return
    try:
        old_rows = read_jsonl(rows_folder(folder) / f"{name}.jsonl")
    except InputError:  # none yet, or unreadable: there is nothing to carry over
        return
    same_rows = len(old_rows) == len(rows) and all(
        (o.get("split"), o.get("row_id")) == (r["split"], r["row_id"])
        for o, r in zip(old_rows, rows, strict=True)
    )
    if not same_rows:
        return
    measures = summary.setdefault("measures", {})
    for key in missing:
        measures[key] = before["measures"][key]
        for old, row in zip(old_rows, rows, strict=True):
            for part in ("measures", "replies"):
                if key in old.get(part, {}):
                    row.setdefault(part, {})[key] = old[part][key]
    summary["measures"] = dict(sorted(measures.items()))


def _measure_config(
    summary: dict[str, Any],
    rows: list[DataRow],
    fields: list[str],
    measures: tuple[Measure, ...],
    cache: GenerationCache,
    *,
    quiet: bool,
    label: str,
    done: Callable[[], None] = lambda: None,
) -> None:
    """Score every (row, text field) with each measure; the summary and each row's
    `_result` (its line in validation/<config>.jsonl) gain the results. `done` is called
    as each measure finishes."""
    transform = summary["transform"]
    items = [
        Item(
            str(row.get(f"original_{field}") or ""),
            str(row.get(field) or ""),
            instruction(transform, row.get(f"language_{field}")),
        )
        for row in rows
        for field in fields
    ]
    results = summary.setdefault("measures", {})
    for measure in measures:
        values = measure.score(items, cache, quiet=quiet, label=f"{label} {measure.key}")
        scored = [v for v, _, _ in values if v is not None]
        problems = Counter(p or "no value" for v, _, p in values if v is None)
        done()
        results[measure.key] = {
            **measure.describe(),
            "scored": len(scored),
            "unscored": len(values) - len(scored),
            "problems": dict(sorted(problems.items())),
            "mean": round(statistics.fmean(scored), 4) if scored else None,
            "sd": round(statistics.stdev(scored), 4) if len(scored) > 1 else None,
        }
        flat = iter(values)
        for row in rows:
            for field in fields:
                value, reply, _ = next(flat)
                result = row["_result"]
                result.setdefault("measures", {}).setdefault(measure.key, {})[field] = value
                if reply is not None:
                    result.setdefault("replies", {}).setdefault(measure.key, {})[field] = reply
    summary["measures"] = dict(sorted(results.items()))


def _meaning_config(
    summary: dict[str, Any],
    rows: list[DataRow],
    fields: list[str],
    check: MeaningCheck,
    examples: int,
) -> None:
    """Judge the meaning of every field the check applies to; the summary gains
    `meaning` and each row's `_result` its drift per field and, when a field changed,
    the warning `meaning-changed` (never a failed check: the error rate stays the form
    checks')."""
    axis = summary.get("axis")
    if not check.applies(axis, None):  # a transform that changes length or language
        return
    where = [
        (i, field)
        for i, row in enumerate(rows)
        for field in fields
        if check.applies(axis, row.get(f"language_{field}") or None)
        and str(row.get(field) or "").strip()
    ]
    pairs = [(str(rows[i].get(f"original_{f}") or ""), str(rows[i].get(f) or "")) for i, f in where]
    found = check.judge(pairs)
    checked: set[int] = set()
    changed: set[int] = set()
    shown: list[dict[str, object]] = []
    for (i, field), verdict, (original, output) in zip(where, found, pairs, strict=True):
        result = rows[i]["_result"]
        result.setdefault("meaning_drift", {})[field] = verdict.drift
        checked.add(i)
        if verdict.evidence:
            result.setdefault("meaning_evidence", {})[field] = list(verdict.evidence)
        if verdict.changed:
            changed.add(i)
            if len(shown) < examples and not any(e["row_id"] == rows[i].get("row_id")
                                                 for e in shown):  # fmt: skip
                shown.append(
                    {"split": rows[i]["_split"], "row_id": rows[i].get("row_id"),
                     "field": field, "original": original, "output": output,
                     "drift": verdict.drift, "evidence": list(verdict.evidence)}
                )  # fmt: skip
    for i in changed:
        rows[i]["_result"]["warnings"] = [MEANING_CHANGED]
    summary["meaning"] = {
        **check.describe(),
        "checked_rows": len(checked),
        "changed_rows": len(changed),
        "changed_rate": round(len(changed) / len(checked), 4) if checked else 0.0,
        "not_checked_rows": len(rows) - len(checked),
        "examples": shown,
    }


def rows_folder(folder: Path) -> Path:
    """The run folder's `validation/` folder of per-row results, refused when a symbolic
    link would lead its reads and writes out of the run folder."""
    return inside(folder, ROWS_DIR, where=folder, key="folder of per-row results")


def _write(
    folder: Path,
    report: ValidationReport,
    per_row: dict[str, list[DataRow]],
    meta: RunMeta,
) -> None:
    rows_dir = rows_folder(folder)
    rows_dir.mkdir(exist_ok=True)
    for name, rows in per_row.items():
        atomic_write_text(
            rows_dir / f"{name}.jsonl",
            "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
        )
    for stale in rows_dir.glob("*.jsonl"):
        if stale.stem not in report["configs"]:
            stale.unlink()
    atomic_write_text(folder / REPORT_JSON, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(
        folder / REPORT_MD,
        validation_markdown(report, worst_rows(folder, report, per_row), decisions(report, meta)),
    )


def _texts_held(row: Any, key: str) -> bool:
    """Whether a rows file's line holds its texts and the measure `key` as objects (a
    file from an older version, or edited by hand, may not)."""
    return (
        isinstance(row, dict)
        and isinstance(row.get("original"), dict)
        and isinstance(row.get("output") or {}, dict)
        and isinstance(row.get("measures"), dict)
        and isinstance(row["measures"].get(key), dict)
    )


def _rows_of(
    folder: Path, report: ValidationReport, per_row: dict[str, list[DataRow]]
) -> dict[str, list[DataRow]]:
    """Each config's rows: checked in this run (`per_row`), else read from its rows file
    (none when it has none or it cannot be read)."""
    rows_of: dict[str, list[DataRow]] = {}
    for name in report["configs"]:
        if name in per_row:
            rows_of[name] = per_row[name]
            continue
        try:
            rows_of[name] = read_jsonl(rows_folder(folder) / f"{name}.jsonl")
        except InputError:  # none, or unreadable: nothing of it to list
            rows_of[name] = []
    return rows_of


def worst_rows(
    folder: Path, report: ValidationReport, per_row: dict[str, list[DataRow]]
) -> list[list[str]]:
    """The worst-rows table's rows: per drift measure the WORST_DRIFT rows of largest
    drift (each by its field of largest drift), then the first example of each failure
    kind found. A config carried over from an earlier report is read from its rows file;
    rows written before the files held their texts are left out of the drift list."""
    configs = report["configs"]
    rows_of = _rows_of(folder, report, per_row)
    out: list[list[str]] = []
    keys = sorted(
        {k for c in configs.values() for k in c.get("measures", {}) if k.startswith("drift:")}
    )
    for key in keys:
        found = []  # (-drift, config's place, row's place, config, row, field)
        for place, (name, rows) in enumerate(rows_of.items()):
            for i, row in enumerate(rows):
                if not _texts_held(row, key):  # an older or foreign file's row: left out
                    continue
                values = {
                    f: v
                    for f, v in row["measures"][key].items()
                    if isinstance(v, int | float) and f in row["original"]
                }
                if values:
                    field = max(values, key=lambda f: values[f])  # first field of the largest
                    found.append((-values[field], place, i, name, row, field))
        for minus, _, _, name, row, field in sorted(found, key=lambda t: t[:3])[:WORST_DRIFT]:
            out.append(
                [name, f"{row.get('split')} {row.get('row_id')}", field, f"{key} {-minus:.3f}",
                 quote(str(row["original"].get(field, "")), SHOWN_CHARS),
                 quote(str((row.get("output") or {}).get(field, "")), SHOWN_CHARS)]
            )  # fmt: skip
    for check in report["checks"]:
        example = next(
            (
                (n, c["examples"][check][0])
                for n, c in configs.items()
                if c.get("examples", {}).get(check)
            ),
            None,
        )
        if example is None:
            continue
        name, e = example
        why = check
        if check == "wrong-language":
            why += f" (expected {e['language']}, found {e['detected']})"
        out.append(
            [name, f"{e['split']} {e['row_id']}", e["field"], why,
             quote(e["original"], SHOWN_CHARS), quote(e["output"], SHOWN_CHARS)]
        )  # fmt: skip
    return out
