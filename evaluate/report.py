"""From scored records to robustness figures: the axis aggregation, statistics and tables.

The unit of every figure is one dataset subset scored by one model (a "unit"). Within a
unit, each config's main score is averaged over its scored splits; a transformation's score
is the mean over its seeds; an axis's score is the mean over its transformations; the total
is the unweighted mean of the axes (the original excluded), as the HTEB protocol
aggregates. Across units (several datasets, or the subsets of a multilingual one) each
figure is the plain mean over units.

Every variant figure comes in two forms: its score, and its paired delta (the variant's
score minus the original's on the same rows). The statistics test the deltas.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean, median
from typing import Any

import numpy as np

from shiftbench.stats import hodges_lehmann, holm, wilcoxon_signed_rank

AXES = ("Lexical/Stylistic", "Length", "Language")
PROBE = ("mrr", "hits_at_1", "hits_at_3")
ALL_MODELS = "(all models)"
SPLIT_HALF_DRAWS = 200
SPLIT_HALF_SEED = 0


@dataclass
class Pair:
    """A variant figure: its score and its paired delta."""

    score: float
    delta: float


@dataclass
class Unit:
    """One model on one dataset subset: the original's score and each transformation's."""

    model: str
    dataset: str
    subset: str
    task_type: str
    original: float | None = None
    transforms: dict[str, Pair] = field(default_factory=dict)
    axis_of: dict[str, str] = field(default_factory=dict)
    seeds: dict[str, int] = field(default_factory=dict)
    # the EvalRank probe per transformation: mrr, hits_at_1, hits_at_3 (means over seeds)
    probe: dict[str, dict[str, float]] = field(default_factory=dict)

    def axes(self) -> dict[str, Pair]:
        by_axis: dict[str, list[Pair]] = defaultdict(list)
        for name, pair in self.transforms.items():
            by_axis[self.axis_of[name]].append(pair)
        return {
            axis: Pair(fmean(p.score for p in pairs), fmean(p.delta for p in pairs))
            for axis in AXES
            if (pairs := by_axis.get(axis))
        }

    def total(self) -> Pair | None:
        axes = self.axes()
        if not axes:
            return None
        return Pair(fmean(p.score for p in axes.values()), fmean(p.delta for p in axes.values()))


def dataset_labels(documents: Sequence[dict[str, Any]]) -> list[str]:
    """Each document's dataset name: the source's, or with the results' own label when
    two documents score the same source (say, run folders of two generators)."""
    names = [d["source"]["name"] for d in documents]
    return [
        n if names.count(n) == 1 else f"{n} ({d['target']})"
        for n, d in zip(names, documents, strict=True)
    ]


def units(documents: Sequence[dict[str, Any]]) -> list[Unit]:
    """Every (model, dataset, subset) of the results documents, aggregated over splits
    and seeds."""
    out: list[Unit] = []
    for doc, label in zip(documents, dataset_labels(documents), strict=True):
        for entry in doc["models"]:
            model = entry["model"]["id"]
            by_subset: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for record in entry["results"]:
                by_subset[record["subset"]].append(record)
            for subset, records in by_subset.items():
                out.append(_unit(model, label, subset, doc["task_type"], records))
    return out


def _unit(model: str, dataset: str, subset: str, task_type: str, records: list[dict]) -> Unit:
    unit = Unit(model, dataset, subset, task_type)
    originals = [r["main_score"] for r in records if r["kind"] == "original"]
    unit.original = fmean(originals) if originals else None
    # transform -> seed -> the records of that config (one per split)
    variants: dict[str, dict[Any, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r["kind"] != "original" and r["delta"] is not None:
            variants[r["transform"]][r["seed"]].append(r)
            unit.axis_of[r["transform"]] = r["axis"]
    for name, seeds in variants.items():
        per_seed = [
            Pair(fmean(r["main_score"] for r in rs), fmean(r["delta"] for r in rs))
            for rs in seeds.values()
        ]
        unit.transforms[name] = Pair(
            fmean(p.score for p in per_seed), fmean(p.delta for p in per_seed)
        )
        unit.seeds[name] = len(per_seed)
        probes = [
            r["evalrank"]
            for rs in seeds.values()
            for r in rs
            if (r.get("evalrank") or {}).get("pairs")
        ]
        if probes:
            unit.probe[name] = {k: fmean(p[k] for p in probes) for k in PROBE}
    return unit


def _mean_pairs(pairs: Sequence[Pair]) -> dict[str, float] | None:
    if not pairs:
        return None
    return {"score": fmean(p.score for p in pairs), "delta": fmean(p.delta for p in pairs)}


def _mean_probe(probes: list[dict[str, float]]) -> dict[str, Any]:
    if not probes:
        return {}
    return {"evalrank": {k: fmean(p[k] for p in probes) for k in PROBE}}


def model_summary(all_units: list[Unit]) -> dict[str, dict[str, Any]]:
    """Per model: the original, each transformation, each axis and the total, averaged
    over the units that have them."""
    out: dict[str, dict[str, Any]] = {}
    for model in dict.fromkeys(u.model for u in all_units):
        mine = [u for u in all_units if u.model == model]
        transforms = dict.fromkeys(t for u in mine for t in u.transforms)
        axis_of = {t: a for u in mine for t, a in u.axis_of.items()}
        originals = [u.original for u in mine if u.original is not None]
        totals = [t for u in mine if (t := u.total()) is not None]
        out[model] = {
            "units": len(mine),
            "original": fmean(originals) if originals else None,
            "transforms": {
                t: {
                    "axis": axis_of[t],
                    **(_mean_pairs([u.transforms[t] for u in mine if t in u.transforms]) or {}),
                    **_mean_probe([u.probe[t] for u in mine if t in u.probe]),
                }
                for t in transforms
            },
            "axes": {
                axis: pairs
                for axis in AXES
                if (pairs := _mean_pairs([u.axes()[axis] for u in mine if axis in u.axes()]))
            },
            "total": _mean_pairs(totals),
        }
    return out


def transform_tests(all_units: list[Unit], level: float = 0.95) -> list[dict[str, Any]]:
    """Per model and transformation, over units: the Wilcoxon signed-rank test of the
    paired deltas, their Hodges-Lehmann shift with its confidence interval, and Holm's
    adjustment across the model's transformations. With several models, the same again
    over every (model, unit) pair, as model "(all models)"."""
    rows: list[dict[str, Any]] = []
    models = list(dict.fromkeys(u.model for u in all_units))
    groups = [(m, [u for u in all_units if u.model == m]) for m in models]
    if len(models) > 1:
        groups.append((ALL_MODELS, all_units))
    for model, mine in groups:
        names = list(dict.fromkeys(t for u in mine for t in u.transforms))
        first = len(rows)
        for name in names:
            deltas = [u.transforms[name].delta for u in mine if name in u.transforms]
            statistic, p, method = wilcoxon_signed_rank(deltas)
            shift, low, high, achieved = hodges_lehmann(deltas, level)
            axis = next(u.axis_of[name] for u in mine if name in u.axis_of)
            rows.append(
                {
                    "model": model,
                    "transform": name,
                    "axis": axis,
                    "n": len(deltas),
                    "mean_delta": fmean(deltas),
                    "hodges_lehmann": shift,
                    "ci_low": low,
                    "ci_high": high,
                    "ci_level": achieved,
                    "wilcoxon_statistic": statistic,
                    "p": p,
                    "p_method": method,
                }
            )
        adjusted = holm([r["p"] for r in rows[first:]])
        for r, p_holm in zip(rows[first:], adjusted, strict=True):
            r["p_holm"] = p_holm
    return rows


def ranking_agreement(summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Kendall's tau-b between the models' ranking on the original and on each
    transformation and axis (scores averaged over units). Needs two models or more."""
    from scipy.stats import kendalltau

    models = [m for m, s in summary.items() if s["original"] is not None]
    if len(models) < 2:
        return []
    original = [summary[m]["original"] for m in models]
    columns: dict[str, tuple[str, str]] = {}
    for m in models:
        for t in summary[m]["transforms"]:
            columns.setdefault(t, ("transform", t))
    for axis in AXES:
        if all(axis in summary[m]["axes"] for m in models):
            columns[axis] = ("axis", axis)
    out = []
    for label, (kind, key) in columns.items():
        group = "transforms" if kind == "transform" else "axes"
        if not all(key in summary[m][group] for m in models):
            continue
        shifted = [summary[m][group][key]["score"] for m in models]
        tau, p = kendalltau(original, shifted)
        out.append(
            {"of": label, "kind": kind, "models": len(models), "tau": float(tau), "p": float(p)}
        )
    return out


def split_half_reliability(
    all_units: list[Unit], draws: int = SPLIT_HALF_DRAWS, seed: int = SPLIT_HALF_SEED
) -> dict[str, Any] | None:
    """How stable the per-axis profiles are: the units of each task type are split at
    random into two halves; each half gives every (model, axis) its mean delta, and the
    two halves' profiles are correlated (Spearman). The median over `draws` splits.
    None with fewer than two units per model."""
    from scipy.stats import spearmanr

    keys = sorted({(u.dataset, u.subset, u.task_type) for u in all_units})
    if len(keys) < 2:
        return None
    by_type: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for key in keys:
        by_type[key[2]].append(key)
    models = list(dict.fromkeys(u.model for u in all_units))
    table = {(u.model, u.dataset, u.subset, u.task_type): u.axes() for u in all_units}
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(draws):
        half_a: set[tuple[str, str, str]] = set()
        leftover = []
        for group in by_type.values():
            order = [group[i] for i in rng.permutation(len(group))]
            half_a.update(order[: len(order) // 2])
            if len(order) % 2:
                leftover.append(order[-1])
        # odd units go to the halves alternately, starting at random
        start = int(rng.integers(2))
        half_a.update(k for i, k in enumerate(leftover) if (i + start) % 2 == 0)
        half_b = set(keys) - half_a
        if not half_a or not half_b:
            continue
        a_profile, b_profile = [], []
        for model in models:
            for axis in AXES:
                a = [
                    table[(model, *k)][axis].delta
                    for k in half_a
                    if axis in table.get((model, *k), {})
                ]
                b = [
                    table[(model, *k)][axis].delta
                    for k in half_b
                    if axis in table.get((model, *k), {})
                ]
                if a and b:
                    a_profile.append(fmean(a))
                    b_profile.append(fmean(b))
        if len(a_profile) >= 3 and len(set(a_profile)) > 1 and len(set(b_profile)) > 1:
            values.append(float(spearmanr(a_profile, b_profile)[0]))
    if not values:
        return None
    return {"median_spearman": median(values), "draws": len(values), "units": len(keys)}


def summarise(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """Everything the report shows, as data (it is also written as summary.json)."""
    all_units = units(documents)
    summary = model_summary(all_units)
    return {
        "datasets": dataset_labels(documents),
        "units": [
            {
                "model": u.model,
                "dataset": u.dataset,
                "subset": u.subset,
                "task_type": u.task_type,
                "original": u.original,
                "transforms": {
                    t: {
                        "axis": u.axis_of[t],
                        "seeds": u.seeds[t],
                        **vars(p),
                        **({"evalrank": u.probe[t]} if t in u.probe else {}),
                    }
                    for t, p in u.transforms.items()
                },
            }
            for u in all_units
        ],
        "models": summary,
        "tests": transform_tests(all_units),
        "kendall": ranking_agreement(summary),
        "split_half": split_half_reliability(all_units),
    }


# --- tables ----------------------------------------------------------------------------------


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return ""
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def axis_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The axis table: per model, the original, each axis (score and delta), the total."""
    models = summary["models"]
    axes = [a for a in AXES if any(a in s["axes"] for s in models.values())]
    header = ["model", "original"]
    for axis in axes:
        header += [axis, "delta"]
    header += ["total", "delta"]
    rows = []
    for model, s in models.items():
        row = [model, _num(s["original"])]
        for axis in axes:
            pair = s["axes"].get(axis)
            row += [_num(pair and pair["score"]), _num(pair and pair["delta"], True)]
        total = s["total"]
        row += [_num(total and total["score"]), _num(total and total["delta"], True)]
        rows.append(row)
    return header, rows


def plain_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *map(fmt, rows)])


def markdown_table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    """A Markdown table whose first `left` columns are text, the rest right-aligned."""
    align = ["---"] * left + ["---:"] * (len(header) - left)
    lines = [header, align, *rows]
    return "\n".join(
        "| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |" for r in lines
    )


def markdown_report(documents: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    """The Markdown report: the axis table, every config's figures, the statistics."""
    parts = ["# Robustness report", ""]
    parts.append(f"Datasets: {', '.join(summary['datasets'])}.")
    parts += ["", "## Scores by axis", ""]
    parts.append(
        "Mean over seeds, then over the transformations of an axis; total = unweighted mean "
        "of the axes. delta = variant minus the original on the same rows."
    )
    parts += ["", markdown_table(*axis_rows(summary)), ""]
    parts += ["## Transformations", ""]
    header = ["model", "transform", "axis", "score", "delta", "EvalRank MRR", "Hits@1", "Hits@3"]
    rows = [
        [
            m, t, v["axis"], _num(v.get("score")), _num(v.get("delta"), True),
            *(_num(v.get("evalrank", {}).get(k)) for k in PROBE),
        ]
        for m, s in summary["models"].items()
        for t, v in s["transforms"].items()
    ]  # fmt: skip
    parts += [markdown_table(header, rows, left=3), ""]
    parts += [
        "EvalRank: each transformed text ranks all original texts of its split by cosine "
        "similarity; MRR and Hits@k of its own original (no labels needed).",
        "",
    ]
    for doc, label in zip(documents, summary["datasets"], strict=True):
        parts += [f"## {label}: {doc['task_type']}, {doc['main_score']}", ""]
        header = ["model", "config", "split", "rows", "score", "original (same rows)", "delta"]
        rows = [
            [
                entry["model"]["id"], r["config"], r["split"], str(r["rows"]),
                _num(r["main_score"]), _num(r["original_same_rows"]), _num(r["delta"], True),
            ]
            for entry in doc["models"]
            for r in entry["results"]
        ]  # fmt: skip
        parts += [markdown_table(header, rows, left=3), ""]
    parts += ["## Statistics", ""]
    parts.append(
        "Over units (dataset subsets; '(all models)' pools every model and unit): Wilcoxon "
        "signed-rank test of the deltas (exact when it can be), Hodges-Lehmann shift with its "
        "confidence interval, Holm-adjusted p across each group's transformations."
    )
    tests = [t for t in summary["tests"] if t["n"] >= 2]
    if not tests:
        parts += ["", "The tests need two dataset subsets or more; this report has one.", ""]
    header = ["model", "transform", "n", "HL shift", "CI", "level", "W", "p", "p (Holm)"]
    rows = [
        [
            t["model"], t["transform"], str(t["n"]), _num(t["hodges_lehmann"], True),
            f"[{t['ci_low']:+.4f}, {t['ci_high']:+.4f}]", f"{t['ci_level']:.3f}",
            f"{t['wilcoxon_statistic']:g}", f"{t['p']:.4g}", f"{t['p_holm']:.4g}",
        ]
        for t in tests
    ]  # fmt: skip
    if rows:
        parts += ["", markdown_table(header, rows, left=2), ""]
    if summary["kendall"]:
        parts += ["Kendall's tau between the models' rankings on the original and on:", ""]
        rows = [
            [k["of"], str(k["models"]), f"{k['tau']:+.3f}", f"{k['p']:.4g}"]
            for k in summary["kendall"]
        ]
        parts += [markdown_table(["of", "models", "tau", "p"], rows), ""]
        if len(summary["models"]) == 2:
            parts += ["(With two models, tau is +1 or -1: the pair keeps or swaps its order.)", ""]
    half = summary["split_half"]
    if half:
        parts.append(
            f"Split-half reliability of the per-axis profiles: median Spearman "
            f"{half['median_spearman']:.3f} over {half['draws']} task-stratified splits of "
            f"{half['units']} units."
        )
    else:
        parts.append("Split-half reliability needs two units or more.")
    return "\n".join(parts).rstrip() + "\n"
