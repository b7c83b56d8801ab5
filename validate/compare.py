"""`shiftbench compare`: validated runs of several generators side by side, to pick one.

Every run must come from the same source and carry a validation report. A generator is
the model that wrote a run (the run folder's name is added when two runs share a model).
The comparison holds:
- per generator and transform: rows, total error rate, mean edit distance and the mean of
  every measure (drift, judges, ParaPLUIE);
- per measure of one kind (by default the quality judges): the generators x judges matrix
  of means with 95% percentile-bootstrap intervals, over the pairs every generator has a
  value for (the same source rows, transforms and text fields; seeds averaged), and paired
  bootstrap tests between every two generators, Holm-corrected per judge.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, TypedDict

from shiftbench import __version__
from shiftbench.core.data.jsonfiles import read_jsonl
from shiftbench.core.data.names import inside
from shiftbench.core.data.runfolder import read_meta, read_validation
from shiftbench.core.records import RunMeta, ValidationReport
from shiftbench.core.stats import BOOTSTRAP_SAMPLES, bootstrap_mean_ci, holm, paired_bootstrap_p
from shiftbench.core.tables import markdown_table
from shiftbench.errors import InputError
from shiftbench.validate.report import REPORT_JSON, ROWS_DIR

ItemId = tuple[str, str, str, Any, str]  # transform, subset, split, row_id, field


class GeneratorRef(TypedDict):
    run: str
    model: str


class TransformComparison(TypedDict):
    """One (generator, transform) row of compare's per-transform table."""

    generator: str
    transform: str
    configs: int
    rows: int
    total_error_rate: float
    error_rates: dict[str, float]
    mean_edit_distance: float
    measures: dict[str, float]


class JudgeMean(TypedDict):
    mean: float
    ci95: list[float]


class JudgeTest(TypedDict):
    """A paired bootstrap test between two generators on one judge, Holm-adjusted."""

    a: str
    b: str
    mean_difference: float
    p: float
    p_holm: float


class JudgeMatrix(TypedDict):
    """One judge's means per generator over the items all of them have, and the tests."""

    measure: str
    items: int
    missing_for: list[str]
    means: dict[str, JudgeMean]
    tests: list[JudgeTest]


class ComparisonDocument(TypedDict):
    """compare.json: generators compared on their validation reports."""

    format: int
    shiftbench_version: str
    kind: str
    bootstrap_samples: int
    generators: dict[str, GeneratorRef]
    per_transform: list[TransformComparison]
    matrix: list[JudgeMatrix]


def load_generators(runs: list[Path]) -> dict[str, dict[str, Any]]:
    """Per generator label: its run, summaries per config, and per-measure item values."""
    sources = set()
    found: list[tuple[str, Path, dict[str, Any]]] = []
    for run in runs:
        meta = read_meta(run)
        source = meta["source"]
        sources.add((source["dataset_path"], source.get("revision")))
        report = read_validation(run)
        if report is None:
            raise InputError(f"{run} has no {REPORT_JSON}: run 'shiftbench validate' first")
        models = {c.get("model") for c in report["configs"].values()}
        for model in sorted(m or "unknown" for m in models):
            found.append((model, run, _load_values(run, meta, report, model)))
    if len(sources) > 1:
        raise InputError(
            "the runs come from different sources ("
            + ", ".join(f"{p}@{r}" for p, r in sorted(sources, key=str))
            + "); compare runs of one source"
        )
    counts = Counter(model for model, _, _ in found)
    generators: dict[str, dict[str, Any]] = {}
    for model, run, data in found:
        label = model if counts[model] == 1 else f"{model} ({run.name})"
        if label in generators:
            raise InputError(f"{run} is named twice")
        generators[label] = {"run": str(run), "model": model, **data}
    if len(generators) < 2:
        raise InputError("compare needs runs of at least two generators")
    return generators


def _load_values(run: Path, meta: RunMeta, report: ValidationReport, model: str) -> dict[str, Any]:
    summaries = {
        name: c for name, c in report["configs"].items() if (c.get("model") or "unknown") == model
    }
    values: dict[str, dict[ItemId, list[float]]] = defaultdict(lambda: defaultdict(list))
    for name, summary in summaries.items():
        if not summary.get("measures"):
            continue
        subset = meta["configs"][name]["subset"] if name in meta["configs"] else "default"
        rows = inside(run, ROWS_DIR, f"{name}.jsonl", where=run / REPORT_JSON, key="config")
        for row in read_jsonl(rows):
            for key, per_field in row.get("measures", {}).items():
                for field, value in per_field.items():
                    if value is not None:
                        item = (
                            summary["transform"],
                            subset,
                            row["split"],
                            row["row_id"],
                            field,
                        )
                        values[key][item].append(value)
    averaged = {
        key: {item: statistics.fmean(v) for item, v in items.items()}
        for key, items in values.items()
    }
    return {"configs": summaries, "values": averaged}


def compare(runs: list[Path], kind: str = "judge-quality") -> ComparisonDocument:
    """The comparison document (see the module docstring)."""
    generators = load_generators(runs)
    table: list[TransformComparison] = []
    for label, g in generators.items():
        by_transform: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for summary in g["configs"].values():
            by_transform[summary["transform"]].append(summary)
        for transform, summaries in by_transform.items():
            rows = sum(s["rows"] for s in summaries)
            measures: dict[str, list[tuple[float, int]]] = defaultdict(list)
            for s in summaries:
                for key, m in s.get("measures", {}).items():
                    if m["mean"] is not None:
                        measures[key].append((m["mean"], m["scored"]))
            table.append(
                {
                    "generator": label,
                    "transform": transform,
                    "configs": len(summaries),
                    "rows": rows,
                    "total_error_rate": round(sum(s["failed_rows"] for s in summaries) / rows, 4),
                    "error_rates": {
                        c: round(sum(s["error_counts"][c] for s in summaries) / rows, 4)
                        for c in summaries[0]["error_counts"]
                    },
                    "mean_edit_distance": round(
                        sum(s["mean_edit_distance"] * s["rows"] for s in summaries) / rows, 4
                    ),
                    "measures": {
                        k: round(sum(m * n for m, n in v) / sum(n for _, n in v), 4)
                        for k, v in sorted(measures.items())
                        if sum(n for _, n in v)
                    },
                }
            )
    keys = sorted({k for g in generators.values() for k in g["values"] if k.startswith(kind + ":")})
    return {
        "format": 1,
        "shiftbench_version": __version__,
        "kind": kind,
        "bootstrap_samples": BOOTSTRAP_SAMPLES,
        "generators": {
            label: {"run": g["run"], "model": g["model"]} for label, g in generators.items()
        },
        "per_transform": table,
        "matrix": [_judge_matrix(generators, key) for key in keys],
    }


def _judge_matrix(generators: dict[str, dict[str, Any]], key: str) -> JudgeMatrix:
    """One judge (measure key): each generator's mean and interval over the shared items,
    and Holm-corrected paired bootstrap tests between generators."""
    missing = [label for label, g in generators.items() if key not in g["values"]]
    if missing:
        return {"measure": key, "items": 0, "missing_for": missing, "means": {}, "tests": []}
    shared = set.intersection(*(set(g["values"][key]) for g in generators.values()))
    items = sorted(shared, key=str)
    columns = {label: [g["values"][key][i] for i in items] for label, g in generators.items()}
    means: dict[str, JudgeMean] = {}
    for label, column in columns.items():
        if column:
            low, high = bootstrap_mean_ci(column)
            means[label] = {
                "mean": round(statistics.fmean(column), 4),
                "ci95": [round(low, 4), round(high, 4)],
            }
    tests: list[JudgeTest] = []
    if len(items) >= 2:
        pairs = list(itertools.combinations(columns, 2))
        raw = [paired_bootstrap_p(columns[a], columns[b]) for a, b in pairs]
        for (a, b), p, adjusted in zip(pairs, raw, holm(raw), strict=True):
            tests.append(
                {
                    "a": a,
                    "b": b,
                    "mean_difference": round(
                        statistics.fmean(columns[a]) - statistics.fmean(columns[b]), 4
                    ),
                    "p": round(p, 4),
                    "p_holm": round(adjusted, 4),
                }
            )
    return {"measure": key, "items": len(items), "missing_for": [], "means": means, "tests": tests}


def comparison_markdown(doc: ComparisonDocument) -> str:
    """The comparison for people: the per-transform table, then each judge's matrix."""
    measure_keys = sorted({k for r in doc["per_transform"] for k in r["measures"]})
    lines = [
        "# Generator comparison",
        "",
        f"shiftbench {doc['shiftbench_version']}. Rates and means per generator and "
        "transform, over every validated config (seeds pooled).",
        "",
    ]
    rows = [
        [
            r["generator"], r["transform"], str(r["rows"]), f"{r['total_error_rate']:.1%}",
            f"{r['mean_edit_distance']:.3f}",
            *(f"{r['measures'][k]:.3f}" if k in r["measures"] else "-" for k in measure_keys),
        ]
        for r in doc["per_transform"]
    ]  # fmt: skip
    header = ["generator", "transform", "rows", "errors", "edit distance", *measure_keys]
    lines.append(markdown_table(header, rows, left=2, tight_rule=True))
    checks = list(doc["per_transform"][0]["error_rates"]) if doc["per_transform"] else []
    rows = [
        [r["generator"], r["transform"], *(f"{r['error_rates'][c]:.1%}" for c in checks)]
        for r in doc["per_transform"]
    ]
    lines += ["", "Error rate per check:", ""]
    lines.append(markdown_table(["generator", "transform", *checks], rows, 2, tight_rule=True))
    matrices = [m for m in doc["matrix"] if m["means"]]
    if not doc["matrix"]:
        lines += ["", f"No {doc['kind']} scores in these reports."]
    if matrices:
        lines += _matrix_lines(doc, matrices)
    for m in doc["matrix"]:
        if m["missing_for"]:
            lines.append(f"\n{m['measure']}: no scores for {', '.join(m['missing_for'])}.")
    return "\n".join(lines) + "\n"


def _matrix_lines(doc: ComparisonDocument, matrices: list[JudgeMatrix]) -> list[str]:
    """Each judge's mean per generator with its interval, then the paired tests."""
    judges = [m["measure"] for m in matrices]
    lines = [
        "",
        f"## {doc['kind']}: generators x judges",
        "",
        f"Mean with 95% bootstrap interval ({doc['bootstrap_samples']} resamples) over the "
        "pairs every generator has a score for.",
        "",
    ]
    header = [
        "generator",
        *(f"{j} (n={m['items']})" for j, m in zip(judges, matrices, strict=True)),
    ]
    rows = []
    for label in doc["generators"]:
        cells = []
        for m in matrices:
            cell = m["means"].get(label)
            cells.append(
                f"{cell['mean']:.3f} [{cell['ci95'][0]:.3f}, {cell['ci95'][1]:.3f}]"
                if cell
                else "-"
            )
        rows.append([label, *cells])
    lines.append(markdown_table(header, rows, tight_rule=True))
    lines += ["", "Paired bootstrap tests (two-sided), p-values Holm-corrected per judge:", ""]
    rows = [
        [m["measure"], t["a"], t["b"], f"{t['mean_difference']:+.3f}", f"{t['p']:.4f}",
         f"{t['p_holm']:.4f}"]
        for m in matrices
        for t in m["tests"]
    ]  # fmt: skip
    header = ["judge", "a", "b", "mean a - b", "p", "p (Holm)"]
    lines.append(markdown_table(header, rows, left=3, tight_rule=True))
    return lines
