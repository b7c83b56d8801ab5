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

from rapidfuzz.distance import Levenshtein

from shiftbench import __version__
from shiftbench.core.data.jsonfiles import read_jsonl
from shiftbench.core.data.listfields import refuse_listed
from shiftbench.core.data.names import inside
from shiftbench.core.data.runfolder import (
    IDENTITY_KEPT,
    VALIDATION_REPORT,
    read_config_split,
    read_meta,
    read_validation,
)
from shiftbench.core.data.writes import atomic_write_text
from shiftbench.core.progress import bar
from shiftbench.core.records import (
    ConfigRecord,
    ConfigValidationRecord,
    RunMeta,
    ValidationReport,
)
from shiftbench.core.stats import wilson_interval
from shiftbench.core.tables import markdown_table
from shiftbench.core.text.checks import CHECKS, Case, failures
from shiftbench.core.text.langid import (
    EXPECTED_SHARE,
    MIN_LETTERS,
    NOT_CHECKED,
    LanguageID,
    checkable,
)
from shiftbench.core.text.scripts import DENSE_WEIGHT, tokens
from shiftbench.core.text.transforms import instruction
from shiftbench.errors import InputError
from shiftbench.llm.cache import GenerationCache
from shiftbench.validate.judge import Item
from shiftbench.validate.meaning import MEANING_CHANGED, MeaningCheck
from shiftbench.validate.measure import GOAL_FALSE_ALARMS, GOAL_MISSES, unreliable

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


def edit_distance(a: str, b: str) -> float:
    """Word-level Levenshtein distance over the longer text's word count (0: same words);
    in scripts written without spaces each character is a word (validate.scripts.tokens)."""
    wa, wb = tokens(a), tokens(b)
    longest = max(len(wa), len(wb))
    return Levenshtein.distance(wa, wb) / longest if longest else 0.0


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
    per_row: dict[str, list[dict[str, Any]]] = {}
    # one step per config for the automatic checks, and one per config and measure; a
    # judge's own count of pairs shows beside it
    steps = len(chosen) * (1 + len(measures))
    with bar(steps, f"validate {folder.name}", unit="check", quiet=quiet) as progress:
        for name in chosen:
            summary, rows = _validate_config(folder, meta, name, identifier, examples)
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
    per_row: dict[str, list[dict[str, Any]]],
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
    rows: list[dict[str, Any]],
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
    rows: list[dict[str, Any]],
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
    rows: list[dict[str, Any]],
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
    shown: list[dict[str, Any]] = []
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


def _validate_config(
    folder: Path,
    meta: RunMeta,
    name: str,
    identifier: LanguageID,
    examples: int,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The config's summary, and its rows as read, each with its check results under
    `_result` (its line in validation/<config>.jsonl). Every split is read as evaluate
    reads it (runfolder.read_config_split), so validate passes no folder evaluate refuses."""
    config = meta["configs"][name]
    fields = meta["source"]["text_fields"]
    transform = config["transform"]
    rows: list[dict[str, Any]] = []
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
    outputs = [str(row.get(f) or "") for row in rows for f in fields]
    wanted = [row.get(f"language_{f}") or None for row in rows for f in fields]
    judged = [i for i, lang in enumerate(wanted) if checkable(identifier, lang)]
    answers = identifier.detect([outputs[i] for i in judged], [wanted[i] for i in judged])
    found_at = dict(zip(judged, answers, strict=True))
    detected = iter(found_at.get(i, NOT_CHECKED) for i in range(len(outputs)))
    unchecked: Counter[str] = Counter()  # fields per language language ID does not know
    unchecked_rows = 0
    shown: dict[str, list[dict[str, Any]]] = {c: [] for c in CHECKS}
    counts: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    distances = []
    kept_identity = transform in IDENTITY_KEPT
    identical_rows = 0
    for row in rows:
        failed: set[str] = set()
        unchanged = False
        row_detected, row_distance = {}, {}
        for field in fields:
            original = str(row.get(f"original_{field}") or "")
            output = str(row.get(field) or "")
            found = next(detected)
            if found == NOT_CHECKED:
                unchecked[row.get(f"language_{field}") or "unknown"] += 1
            case = Case(
                original,
                output,
                transform,
                row.get(f"language_{field}") or None,
                None if found == NOT_CHECKED else found,
                row.get("finish_reason"),
            )
            field_failed = failures(case)
            if kept_identity and "identical" in field_failed:
                field_failed.remove("identical")  # a result here, counted on its own
                unchanged = True
            failed.update(field_failed)
            row_detected[field] = found
            row_distance[field] = round(edit_distance(original, output), 4)
            languages[found] += 1
            for check in field_failed:
                if len(shown[check]) < examples:
                    shown[check].append(
                        {
                            "split": row["_split"],
                            "row_id": row.get("row_id"),
                            "field": field,
                            "original": original,
                            "output": output,
                            "language": case.language,
                            "detected": found,
                            "finish_reason": case.finish_reason,
                        }
                    )
        counts.update(failed)
        identical_rows += unchanged
        not_checked = NOT_CHECKED in row_detected.values()
        unchecked_rows += not_checked
        distances.append(sum(row_distance.values()) / len(row_distance))
        row["_result"] = {
            "split": row["_split"],
            "row_id": row.get("row_id"),
            # the texts beside their verdicts, so the file is read without a join
            "original": {f: str(row.get(f"original_{f}") or "") for f in fields},
            "output": {f: str(row.get(f) or "") for f in fields},
            "failed": [c for c in CHECKS if c in failed],
            **({"identical": unchanged} if kept_identity else {}),
            **({"not_checked": ["wrong-language"]} if not_checked else {}),
            "edit_distance": row_distance,
            "detected_language": row_detected,
        }
    n = len(rows)
    failed_rows = sum(1 for row in rows if row["_result"]["failed"])
    summary = {
        "transform": transform,
        "axis": config.get("axis"),
        "seed": config.get("seed"),
        "model": (config.get("model") or {}).get("id"),
        "settings_sha256": config.get("settings_sha256"),
        "rows": n,
        "error_counts": {c: counts[c] for c in CHECKS},
        "error_rates": {c: round(counts[c] / n, 4) for c in CHECKS},
        "failed_rows": failed_rows,
        "total_error_rate": round(failed_rows / n, 4),
        # rows with a field equal to its input, where that is a result (back-translation)
        **(
            {"identical_rows": identical_rows, "identical_rate": round(identical_rows / n, 4)}
            if kept_identity
            else {}
        ),
        "mean_edit_distance": round(sum(distances) / n, 4),
        "detected_languages": dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))),
        # rows whose language ID could not judge a field, and those fields' languages
        "not_checked": {"wrong-language": unchecked_rows},
        "unchecked_languages": dict(sorted(unchecked.items())),
        "examples": {c: shown[c] for c in CHECKS if shown[c]},
    }
    return summary, rows


def rows_folder(folder: Path) -> Path:
    """The run folder's `validation/` folder of per-row results, refused when a symbolic
    link would lead its reads and writes out of the run folder."""
    return inside(folder, ROWS_DIR, where=folder, key="folder of per-row results")


def _write(
    folder: Path,
    report: ValidationReport,
    per_row: dict[str, list[dict[str, Any]]],
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
        render_markdown(report, worst_rows(folder, report, per_row), decisions(report, meta)),
    )


def config_languages(meta: RunMeta, name: str) -> list[str]:
    """The languages a config's outputs should be in: its translation targets, else its
    text fields' own languages."""
    config: ConfigRecord | dict[str, Any] = meta["configs"].get(name) or {}
    targets = config.get("target_languages") or []
    if targets:
        return sorted(set(targets))
    own = {c for c in (config.get("source_languages") or {}).values() if c}
    if not own and config.get("source_language"):
        own = {str(config["source_language"])}
    return sorted(own)


def decisions(report: ValidationReport, meta: RunMeta) -> list[str]:
    """validation.md's lead, one line per config: the error rate with its 95% Wilson
    interval, and the checks measured unreliable for the config's languages or source
    (validate/measured.json, made by `shiftbench measure-checks`)."""
    source = meta["source"]["name"]
    lines = []
    for name, c in report["configs"].items():
        languages = config_languages(meta, name)
        low, high = wilson_interval(c["failed_rows"], c["rows"])
        said = f" ({', '.join(languages)})" if languages else ""
        line = (
            f"- **{name}**{said}: {_percent(c['total_error_rate'])} of {c['rows']} rows "
            f"failed a check, 95% interval [{_percent(low)}, {_percent(high)}]. "
        )
        found = unreliable(languages, source)
        where = " or ".join([", ".join(languages), source] if languages else [source])
        if found is None:
            line += "No measurement of the checks is packaged."
        elif found:
            line += f"Checks measured unreliable for {where}: {'; '.join(found)}."
        else:
            line += f"No check was measured unreliable for {where}."
        meaning = c.get("meaning") or {}
        if meaning.get("checked_rows"):
            line += (
                f" The meaning check marked {_percent(meaning['changed_rate'])} of "
                f"{meaning['checked_rows']} rows {MEANING_CHANGED} (a warning, not in the "
                "rate above; see [Meaning](#meaning))."
            )
        lines.append(line)
    return lines


WORST_DRIFT = 5  # rows of largest drift the worst-rows list shows, per drift measure
SHOWN_CHARS = 80  # an original or output in the worst-rows list is cut to this length


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


def worst_rows(
    folder: Path, report: ValidationReport, per_row: dict[str, list[dict[str, Any]]]
) -> list[list[str]]:
    """The worst-rows table's rows: per drift measure the WORST_DRIFT rows of largest
    drift (each by its field of largest drift), then the first example of each failure
    kind found. A config carried over from an earlier report is read from its rows file;
    rows written before the files held their texts are left out of the drift list."""
    configs = report["configs"]
    rows_of: dict[str, list[dict[str, Any]]] = {}
    for name in configs:
        if name in per_row:
            rows_of[name] = per_row[name]
            continue
        try:
            rows_of[name] = read_jsonl(rows_folder(folder) / f"{name}.jsonl")
        except InputError:  # none, or unreadable: nothing of it to list
            rows_of[name] = []
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
                 _quote(str(row["original"].get(field, "")), SHOWN_CHARS),
                 _quote(str((row.get("output") or {}).get(field, "")), SHOWN_CHARS)]
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
             _quote(e["original"], SHOWN_CHARS), _quote(e["output"], SHOWN_CHARS)]
        )  # fmt: skip
    return out


def render_markdown(
    report: ValidationReport,
    worst: list[list[str]] | None = None,
    lead: list[str] | None = None,
) -> str:
    """The report for people: what to decide on per config (`lead`, from decisions), one
    table of rates per config, the measures, the worst rows (`worst`, from worst_rows),
    then example failures."""
    checks = report["checks"]
    lid = report["language_id"]
    lines = ["# Validation report", ""]
    if lead:
        goal = f"false alarms above {GOAL_FALSE_ALARMS:.1%} or misses above {GOAL_MISSES:.0%}"
        lines += [
            "## Decision",
            "",
            "Per config, the share of rows that failed any check with its 95% (Wilson) "
            "interval, and the checks measured unreliable for its languages or source "
            f"({goal} on real data, or no measurement possible; `shiftbench "
            "measure-checks`, see the validate guide)"
            + ("; the rows to read first are under [Worst rows](#worst-rows)." if worst
               else "."),
            "",
            *lead,
            "",
        ]  # fmt: skip
    lines += [
        f"shiftbench {report['shiftbench_version']}; language ID: {lid['name']} (texts with "
        f"fewer than {lid['min_letters']} letters are undetermined, a Han, kana or Hangul "
        f"character counting as {lid.get('dense_weight', 1)}; the language an output "
        f"should be in is kept while its confidence is at least "
        f"{lid.get('expected_share', 0):.0%} of the top one's). A row counts as failed "
        "when any of its text fields fails a check; the total counts each row once. A "
        "back-translation equal to its input is no error: it is kept and scored, and counted "
        "under identical (kept). Rows whose language language ID does not know are not "
        "checked for the wrong language (not failures either): counted under language not "
        "checked.",
        "",
    ]
    header = ["config", "rows", "total", *checks, "identical (kept)", "language not checked"]
    rows = [
        [
            name, str(c["rows"]), _percent(c["total_error_rate"]),
            *(_percent(c["error_rates"][k]) for k in checks),
            _percent(c["identical_rate"]) if "identical_rate" in c else "-",
            _unchecked(c), f"{c['mean_edit_distance']:.3f}",
        ]
        for name, c in report["configs"].items()
    ]  # fmt: skip
    lines.append(markdown_table([*header, "edit distance"], rows, tight_rule=True))
    lines += _meaning_lines(report)
    measured = [
        (n, k, m) for n, c in report["configs"].items() for k, m in c.get("measures", {}).items()
    ]
    if measured:
        lines += [
            "",
            "## Measures",
            "",
            "Drift is 1 - cosine between original and output embeddings; judges rate each "
            "(original, output) pair; unscored pairs (no value, an unparseable reply) are "
            "left out of the mean.",
            "",
        ]
        rows = []
        for name, key, m in measured:
            spread = (
                f"{m['mean']:.3f} ± {m['sd']:.3f}"
                if m["sd"] is not None
                else (f"{m['mean']:.3f}" if m["mean"] is not None else "-")
            )
            why = ", ".join(f"{k}: {v}" for k, v in m["problems"].items())
            unscored = f"{m['unscored']}{f' ({why})' if why else ''}"
            rows.append([name, key, spread, str(m["scored"]), unscored])
        header = ["config", "measure", "mean ± SD", "scored", "unscored"]
        lines.append(markdown_table(header, rows, align="llrrl", tight_rule=True))
    if worst:
        lines += [
            "",
            "## Worst rows",
            "",
            f"The {WORST_DRIFT} rows of largest drift per drift measure (each by its field of "
            "largest drift), when drift was measured, and the first example of each failure "
            f"kind found; texts cut to {SHOWN_CHARS} characters. validation/<config>.jsonl "
            "holds every row's texts beside its results.",
            "",
            markdown_table(
                ["config", "row", "field", "why", "original", "output"], worst, align="llllll",
                tight_rule=True,
            ),
        ]  # fmt: skip
    for name, c in report["configs"].items():
        if not c["examples"]:
            continue
        lines += ["", f"## {name}: example failures", ""]
        for check, cases in c["examples"].items():
            for e in cases:
                where = f"{e['split']} row {e['row_id']}, {e['field']}"
                extra = ""
                if check == "wrong-language":
                    extra = f" (expected {e['language']}, found {e['detected']})"
                lines.append(
                    f"- **{check}** ({where}){extra}: {_quote(e['original'])} → "
                    f"{_quote(e['output'])}"
                )
    return "\n".join(lines) + "\n"


def _meaning_lines(report: ValidationReport) -> list[str]:
    """The meaning section: per config checked, its meaning-changed rate, then examples."""
    judged = {n: c["meaning"] for n, c in report["configs"].items() if c.get("meaning")}
    if not judged:
        return []
    first = next(iter(judged.values()))
    encoder = (first.get("encoder") or {}).get("id") or "its encoder"  # describe()'s id
    lines = [
        "",
        "## Meaning",
        "",
        "A row that fails no check above passes the form checks; that says nothing of its "
        f"meaning. The meaning check marks a row {MEANING_CHANGED} when a field's drift "
        f"under {encoder} is above {first['threshold']} or the output says or unsays a "
        "negation: a warning, not counted in the total above. It checks paraphrase, "
        "back-translation and style change (English fields under the default encoder).",
        "",
    ]
    rows = [
        [name, str(m["checked_rows"]), _percent(m["changed_rate"]) if m["checked_rows"] else "-",
         str(m["not_checked_rows"])]
        for name, m in judged.items()
    ]  # fmt: skip
    header = ["config", "rows checked", MEANING_CHANGED, "not checked"]
    lines.append(markdown_table(header, rows, align="lrrr", tight_rule=True))
    if any(m.get("examples") for m in judged.values()):
        lines.append("")
    for name, m in judged.items():
        for e in m.get("examples", []):
            why = f"drift {e['drift']}" if e.get("drift") is not None else "no drift"
            if e.get("evidence"):
                why += f", {', '.join(e['evidence'])}"
            lines.append(
                f"- **{MEANING_CHANGED}** ({name}, {e['split']} row {e['row_id']}, "
                f"{e['field']}; {why}): {_quote(e['original'])} → {_quote(e['output'])}"
            )
    return lines


def _unchecked(summary: ConfigValidationRecord) -> str:
    """Rows not checked for the wrong language, with the languages language ID lacks."""
    rows = summary.get("not_checked", {}).get("wrong-language", 0)
    if not rows:
        return "0"
    return f"{rows} ({', '.join(summary.get('unchecked_languages', {}))})"


def _percent(rate: float) -> str:
    return f"{rate:.1%}"


def _quote(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return "`" + flat.replace("`", "'") + "`" if flat else "(empty)"
