"""`shiftbench validate`: every automatic check on every transformed row of a run folder.

For each transformed config it counts, per check, the rows with at least one failing text
field, and the total error rate (a row counts once however many checks it fails); the
mean normalised word-level edit distance between original and output; the languages found
in the outputs; and a few example failures per check. It writes `validation.json` (for
machines: the dataset card and the release step read it), `validation.md` (for people)
and `validation/<config>.jsonl` (per row: failed checks, edit distance, detected
languages) into the run folder.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from rapidfuzz.distance import Levenshtein

from shiftbench import __version__
from shiftbench.errors import InputError
from shiftbench.runfolder import read_meta
from shiftbench.validate.checks import CHECKS, Case, failures
from shiftbench.validate.langid import MIN_LETTERS, LanguageID

REPORT_JSON = "validation.json"
REPORT_MD = "validation.md"
ROWS_DIR = "validation"


def edit_distance(a: str, b: str) -> float:
    """Word-level Levenshtein distance over the longer text's word count (0: same words)."""
    wa, wb = a.split(), b.split()
    longest = max(len(wa), len(wb))
    return Levenshtein.distance(wa, wb) / longest if longest else 0.0


def plan(folder: Path, configs: tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
    """The run's metadata and the transformed configs to check (all when none are named);
    a one-line InputError for anything that is not there."""
    meta = read_meta(folder)
    available = [n for n, c in meta["configs"].items() if c.get("kind") == "transform"]
    unknown = [c for c in configs if c not in available]
    if unknown:
        raise InputError(
            f"{folder} has no transformed config {unknown[0]!r}; available: "
            f"{', '.join(available) or 'none'}"
        )
    chosen = list(dict.fromkeys(configs)) or available
    if not chosen:
        raise InputError(f"{folder} has no transformed configs to validate")
    return meta, chosen


def over_limit(report: dict[str, Any], limit: float) -> list[tuple[str, float]]:
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
) -> dict[str, Any]:
    """Check every transformed config of the run folder and write the reports into it."""
    meta, chosen = plan(folder, configs)
    fields = meta["source"]["text_fields"]
    report: dict[str, Any] = {
        "format": 1,
        "shiftbench_version": __version__,
        "language_id": {"name": identifier.name, "min_letters": MIN_LETTERS},
        "checks": list(CHECKS),
        "configs": {},
    }
    per_row: dict[str, list[dict[str, Any]]] = {}
    for name in chosen:
        summary, rows = _validate_config(
            folder, name, meta["configs"][name], fields, identifier, examples
        )
        report["configs"][name] = summary
        per_row[name] = rows
    _keep_earlier(folder, meta, report)
    _write(folder, report, per_row)
    return report


def _keep_earlier(folder: Path, meta: dict[str, Any], report: dict[str, Any]) -> None:
    """Carry over an earlier report's results for configs not checked this time, as long
    as the config is unchanged (same settings) and the same language ID judged it."""
    try:
        earlier = json.loads((folder / REPORT_JSON).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return
    if earlier.get("language_id") != report["language_id"]:
        return
    checked = report["configs"]
    kept = {}
    for name, summary in earlier.get("configs", {}).items():
        config = meta["configs"].get(name)
        if name in checked or config is None:
            continue
        if summary.get("settings_sha256") == config.get("settings_sha256"):
            kept[name] = summary
    order = [n for n in meta["configs"] if n in checked or n in kept]
    report["configs"] = {n: checked[n] if n in checked else kept[n] for n in order}


def _validate_config(
    folder: Path,
    name: str,
    config: dict[str, Any],
    fields: list[str],
    identifier: LanguageID,
    examples: int,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    transform = config["transform"]
    rows: list[dict[str, Any]] = []
    for path in sorted((folder / name).glob("*.jsonl")):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                rows.append({"_split": path.stem, **json.loads(line)})
    if not rows:
        raise InputError(f"{folder / name} holds no rows")
    outputs = [str(row.get(f) or "") for row in rows for f in fields]
    detected = iter(identifier.detect(outputs))
    shown: dict[str, list[dict[str, Any]]] = {c: [] for c in CHECKS}
    counts: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    distances = []
    for row in rows:
        failed: set[str] = set()
        row_detected, row_distance = {}, {}
        for field in fields:
            original = str(row.get(f"original_{field}") or "")
            output = str(row.get(field) or "")
            found = next(detected)
            case = Case(
                original,
                output,
                transform,
                row.get(f"language_{field}"),
                found,
                row.get("finish_reason"),
            )
            field_failed = failures(case)
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
        distances.append(sum(row_distance.values()) / len(row_distance))
        row["_result"] = {
            "split": row["_split"],
            "row_id": row.get("row_id"),
            "failed": [c for c in CHECKS if c in failed],
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
        "mean_edit_distance": round(sum(distances) / n, 4),
        "detected_languages": dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))),
        "examples": {c: shown[c] for c in CHECKS if shown[c]},
    }
    per_row = [row["_result"] for row in rows]
    return summary, per_row


def _write(folder: Path, report: dict[str, Any], per_row: dict[str, list[dict[str, Any]]]) -> None:
    rows_dir = folder / ROWS_DIR
    rows_dir.mkdir(exist_ok=True)
    for name, rows in per_row.items():
        _atomic(
            rows_dir / f"{name}.jsonl",
            "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
        )
    for stale in rows_dir.glob("*.jsonl"):
        if stale.stem not in report["configs"]:
            stale.unlink()
    _atomic(folder / REPORT_JSON, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    _atomic(folder / REPORT_MD, render_markdown(report))


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def render_markdown(report: dict[str, Any]) -> str:
    """The report for people: one table of rates per config, then example failures."""
    checks = report["checks"]
    lid = report["language_id"]
    lines = [
        "# Validation report",
        "",
        f"shiftbench {report['shiftbench_version']}; language ID: {lid['name']} (texts with "
        f"fewer than {lid['min_letters']} letters are undetermined). A row counts as failed "
        "when any of its text fields fails a check; the total counts each row once.",
        "",
        "| config | rows | total | " + " | ".join(checks) + " | edit distance |",
        "|---|---:|---:|" + "---:|" * len(checks) + "---:|",
    ]
    for name, c in report["configs"].items():
        rates = " | ".join(_percent(c["error_rates"][k]) for k in checks)
        lines.append(
            f"| {name} | {c['rows']} | {_percent(c['total_error_rate'])} | {rates} | "
            f"{c['mean_edit_distance']:.3f} |"
        )
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


def _percent(rate: float) -> str:
    return f"{rate:.1%}"


def _quote(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return "`" + flat.replace("`", "'") + "`" if flat else "(empty)"
