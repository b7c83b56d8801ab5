"""The statistics across datasets, one dataset one observation: each model's summary with
its rank intervals, the transformation tests (Wilcoxon, Hodges-Lehmann, Holm), HTEB's
median absolute differences and Kendall's tau, split-half reliability, PTEB's baseline
tests, prompt sensitivity. Each is defined where it is computed."""

from __future__ import annotations

import re
from collections import defaultdict
from statistics import fmean, median, stdev
from typing import Literal

import numpy as np

from shiftbench.core.report_rows import (
    BaselineTest,
    ColumnKind,
    FigureRecord,
    KendallPerDataset,
    KendallRow,
    MedianAbsDelta,
    ModelFigures,
    PromptSensitivityRow,
    SplitHalf,
    TransformFigure,
    TransformTest,
)
from shiftbench.core.stats import hodges_lehmann, holm, wilcoxon_signed_rank
from shiftbench.evaluate.report.units import (
    ALL_MODELS,
    AXES,
    HL_BOOTSTRAP,
    PER_DATASET,
    SEED,
    SPLIT_HALF_DRAWS,
    TOTAL,
    TRANSFORMATIONS_FIRST,
    ScoredUnit,
    _figure,
    _merge_faithful,
    _transformations_first,
)

# the ScoredUnit attribute of each probe's figures, and its key in a transformation's figure
_PROBES: tuple[tuple[str, Literal["self_retrieval", "evalrank"]], ...] = (
    ("probe", "self_retrieval"),
    ("evalrank", "evalrank"),
)


def model_summary(
    datasets: list[ScoredUnit], method: str = "percentile", order: str = PER_DATASET
) -> dict[str, ModelFigures]:
    """Per model: the original, each transformation, each axis and the total, averaged
    over the datasets that have them (in `order`), each delta with its 95% interval."""
    out: dict[str, ModelFigures] = {}
    for model in dict.fromkeys(u.model for u in datasets):
        mine = [u for u in datasets if u.model == model]
        names = dict.fromkeys(t for u in mine for t in u.transforms)
        originals = [u.original for u in mine if u.original is not None]
        transforms: dict[str, TransformFigure] = {}
        for t in names:
            having = [u for u in mine if t in u.transforms]
            row: TransformFigure = {
                "axis": having[0].axis_of[t],
                "prompt_variant": having[0].prompt_of.get(t, 1),
                **_figure(
                    [u.transforms[t] for u in having],
                    [u.replicates.get(t) for u in having],
                    [u.items.get(t) for u in having],
                    method,
                ),
            }
            for attr, key in _PROBES:
                figures = [getattr(u, attr)[t] for u in having if t in getattr(u, attr)]
                if figures:
                    keys = set.intersection(*(set(f) for f in figures))
                    row[key] = {k: fmean(f[k] for f in figures) for k in sorted(keys)}
            certified = [u.faithful[t] for u in having if t in u.faithful]
            if certified:
                row["faithful"] = _merge_faithful(certified, len(having))
            transforms[t] = row
        axes: dict[str, FigureRecord] = {}
        for axis in AXES:
            having = [u for u in mine if axis in u.axes()]
            if having:
                axes[axis] = _figure(
                    [u.axes()[axis] for u in having],
                    [u.axis_replicates().get(axis) for u in having],
                    [u.axis_items().get(axis) for u in having],
                    method,
                )
        totals = [u for u in mine if u.total() is not None]
        total = (
            _figure(
                [p for u in totals if (p := u.total()) is not None],
                [u.axis_replicates().get(TOTAL) for u in totals],
                [u.axis_items().get(TOTAL) for u in totals],
                method,
            )
            if totals
            else None
        )
        if order == TRANSFORMATIONS_FIRST:
            axes, total = _transformations_first(transforms, mine, method)
        out[model] = {
            "datasets": len(mine),
            "original": fmean(originals) if originals else None,
            "transforms": transforms,
            "axes": axes,
            "total": total,
        }
    _rank_intervals(out)
    return out


def _rank_intervals(summary: dict[str, ModelFigures]) -> None:
    """Give each model's axis and total deltas a rank interval: a model ranks ahead of
    another only when its whole 95% interval lies above the other's, so models whose
    intervals overlap share ranks (rank 1 = the smallest drop)."""
    for axis in (None, *AXES):
        holders = {
            m: (s["total"] if axis is None else s["axes"].get(axis)) for m, s in summary.items()
        }
        ranked = {m: (f, ci) for m, f in holders.items() if f and (ci := f.get("ci95"))}
        if len(ranked) < 2:
            continue
        for m, (f, (low, high)) in ranked.items():
            above = sum(1 for o, (_, g) in ranked.items() if o != m and g[0] > high)
            below = sum(1 for o, (_, g) in ranked.items() if o != m and g[1] < low)
            f["rank"] = [1 + above, len(ranked) - below]


def _observations(datasets: list[ScoredUnit], model: str, name: str) -> list[float]:
    """The deltas of `name`, one per dataset: the model's, or for ALL_MODELS the mean
    over the models that have it (HTEB's dataset-level observation)."""
    if model != ALL_MODELS:
        return [
            u.transforms[name].delta for u in datasets if u.model == model and name in u.transforms
        ]
    by_dataset: dict[str, list[float]] = defaultdict(list)
    for u in datasets:
        if name in u.transforms:
            by_dataset[u.dataset].append(u.transforms[name].delta)
    return [fmean(v) for v in by_dataset.values()]


def transform_tests(datasets: list[ScoredUnit], level: float = 0.95) -> list[TransformTest]:
    """Per model and transformation, over datasets: the Wilcoxon signed-rank test of the
    paired deltas, their Hodges-Lehmann shift with its confidence interval, and Holm's
    adjustment across the model's transformations. With several models, the same again
    as "(all models)" on one delta per dataset, the mean over the models (HTEB)."""
    rows: list[TransformTest] = []
    models = list(dict.fromkeys(u.model for u in datasets))
    groups = [(m, [u for u in datasets if u.model == m]) for m in models]
    if len(models) > 1:
        groups.append((ALL_MODELS, datasets))
    for model, mine in groups:
        names = list(dict.fromkeys(t for u in mine for t in u.transforms))
        first = len(rows)
        for name in names:
            deltas = _observations(datasets, model, name)
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


def median_absolute_differences(datasets: list[ScoredUnit]) -> list[MedianAbsDelta]:
    """HTEB's |Δ̃|: per dataset and transformation, the delta averaged over models; its
    absolute value's median over datasets per transformation, and per axis over every
    (dataset, transformation) of the axis (default prompts only)."""
    by_cell: dict[tuple[str, str], list[float]] = defaultdict(list)
    axis_of: dict[str, str] = {}
    prompt_of: dict[str, int] = {}
    for u in datasets:
        for name, pair in u.transforms.items():
            by_cell[(u.dataset, name)].append(pair.delta)
            axis_of[name] = u.axis_of[name]
            prompt_of[name] = u.prompt_of.get(name, 1)
    cells = {key: abs(fmean(v)) for key, v in by_cell.items()}
    rows: list[MedianAbsDelta] = []
    for name in dict.fromkeys(n for _, n in cells):
        values = [v for (_, n), v in cells.items() if n == name]
        rows.append(
            {"of": name, "kind": "transform", "n": len(values), "median_abs_delta": median(values)}
        )
    for axis in AXES:
        values = [v for (_, n), v in cells.items() if axis_of[n] == axis and prompt_of[n] == 1]
        if values:
            rows.append(
                {"of": axis, "kind": "axis", "n": len(values), "median_abs_delta": median(values)}
            )
    return rows


def _columns(datasets: list[ScoredUnit]) -> list[tuple[str, ColumnKind]]:
    names = dict.fromkeys(t for u in datasets for t in u.transforms)
    axes = [a for a in AXES if any(a in u.axes() for u in datasets)]
    return [*((n, "transform") for n in names), *((a, "axis") for a in axes), (TOTAL, "total")]


def _score_of(u: ScoredUnit, of: str, kind: str) -> float | None:
    if kind == "transform":
        return u.transforms[of].score if of in u.transforms else None
    if kind == "axis":
        pair = u.axes().get(of)
        return pair.score if pair else None
    total = u.total()
    return total.score if total else None


def kendall_per_dataset(datasets: list[ScoredUnit]) -> list[KendallPerDataset]:
    """HTEB's ranking stability: per dataset, Kendall's tau-b between the models' scores on
    the original and on a transformation (or an axis, or the total); the mean and sample
    SD of those taus over datasets. Datasets where a side is constant (tau undefined) or
    fewer than two models have both scores are left out and counted."""
    from scipy.stats import kendalltau

    by_dataset: dict[str, list[ScoredUnit]] = defaultdict(list)
    for u in datasets:
        by_dataset[u.dataset].append(u)
    rows: list[KendallPerDataset] = []
    for of, kind in _columns(datasets):
        taus: dict[str, float] = {}
        skipped = 0
        for dataset, members in by_dataset.items():
            pairs = [
                (u.original, s) for u in members
                if u.original is not None and (s := _score_of(u, of, kind)) is not None
            ]  # fmt: skip
            if len(pairs) < 2:
                continue
            tau = kendalltau([p[0] for p in pairs], [p[1] for p in pairs])[0]
            if np.isfinite(tau):
                taus[dataset] = float(tau)
            else:
                skipped += 1
        if not taus and not skipped:
            continue
        values = list(taus.values())
        rows.append(
            {
                "of": of,
                "kind": kind,
                "datasets": len(values),
                "undefined": skipped,
                "mean_tau": fmean(values) if values else None,
                "sd_tau": stdev(values) if len(values) > 1 else None,
                "per_dataset": taus,
            }
        )
    return rows


def ranking_agreement(summary: dict[str, ModelFigures]) -> list[KendallRow]:
    """Pooled Kendall's tau-b: between the models' ranking on the original and on each
    transformation and axis, with every score first averaged over datasets (not HTEB's
    per-dataset figure; kept as a summary of the overall ranking). Two models or more."""
    from scipy.stats import kendalltau

    models = [m for m, s in summary.items() if s["original"] is not None]
    if len(models) < 2:
        return []
    original = [summary[m]["original"] for m in models]
    columns: dict[str, tuple[ColumnKind, str]] = {}
    for m in models:
        for t in summary[m]["transforms"]:
            columns.setdefault(t, ("transform", t))
    for axis in AXES:
        if all(axis in summary[m]["axes"] for m in models):
            columns[axis] = ("axis", axis)
    if all(summary[m]["total"] for m in models):
        columns[TOTAL] = ("total", TOTAL)
    out: list[KendallRow] = []
    for label, (kind, key) in columns.items():
        figures = [_column_figure(summary[m], kind, key) for m in models]
        if any(f is None for f in figures):
            continue
        shifted = [f["score"] for f in figures if f is not None]
        tau, p = kendalltau(original, shifted)
        out.append(
            {"of": label, "kind": kind, "models": len(models), "tau": float(tau), "p": float(p)}
        )
    return out


def _column_figure(figures: ModelFigures, kind: ColumnKind, key: str) -> FigureRecord | None:
    """A model's figure of one column: the total, an axis or a transformation."""
    if kind == "total":
        return figures["total"]
    return (figures["transforms"] if kind == "transform" else figures["axes"]).get(key)


def stratified_halves(
    by_type: dict[str, list[str]], rng: np.random.Generator
) -> tuple[set[str], set[str]]:
    """A task-stratified random split of the datasets into two halves: each task type's
    datasets are shuffled and halved; an odd one out goes to the halves in turn."""
    half_a: set[str] = set()
    every: set[str] = set()
    leftover = []
    for group in by_type.values():
        order = [group[i] for i in rng.permutation(len(group))]
        half_a.update(order[: len(order) // 2])
        every.update(order)
        if len(order) % 2:
            leftover.append(order[-1])
    start = int(rng.integers(2))
    half_a.update(k for i, k in enumerate(leftover) if (i + start) % 2 == 0)
    return half_a, every - half_a


def split_half_reliability(
    datasets: list[ScoredUnit],
    draws: int = SPLIT_HALF_DRAWS,
    seed: int = SEED,
    on: Literal["score", "delta"] = "score",
) -> SplitHalf | None:
    """HTEB's split-half reliability of the per-axis profiles, per axis: the datasets are
    split at random into two task-stratified halves; in each half every model gets its
    mean axis figure (`on` = "score", HTEB's; or "delta"); Spearman's rho across models
    between the halves; the median and the 2.5/97.5 percentiles over `draws` seeded
    splits, and the Spearman-Brown full-length value of the median, 2r/(1+r). A draw
    counts for an axis when at least three models have the axis in both halves and
    neither half's figures are all equal. None with fewer than two datasets or three
    models."""
    from scipy.stats import spearmanr

    models = list(dict.fromkeys(u.model for u in datasets))
    names = sorted({u.dataset for u in datasets})
    if len(names) < 2 or len(models) < 3:
        return None
    by_type: dict[str, list[str]] = defaultdict(list)
    for name in names:
        by_type[next(u.task_type for u in datasets if u.dataset == name)].append(name)
    figure = {
        (u.model, u.dataset): {a: getattr(p, on) for a, p in u.axes().items()} for u in datasets
    }
    rng = np.random.default_rng(seed)
    values: dict[str, list[float]] = defaultdict(list)
    for _ in range(draws):
        half_a, half_b = stratified_halves(by_type, rng)
        for axis in AXES:
            a_side, b_side = [], []
            for model in models:
                a = [figure[(model, d)][axis] for d in half_a if axis in figure.get((model, d), {})]
                b = [figure[(model, d)][axis] for d in half_b if axis in figure.get((model, d), {})]
                if a and b:
                    a_side.append(fmean(a))
                    b_side.append(fmean(b))
            if len(a_side) >= 3 and len(set(a_side)) > 1 and len(set(b_side)) > 1:
                values[axis].append(float(spearmanr(a_side, b_side)[0]))
    if not values:
        return None
    out: SplitHalf = {"on": on, "draws": draws, "datasets": len(names), "models": len(models)}
    out["axes"] = {}
    for axis in AXES:
        if axis not in values:
            continue
        rhos = np.asarray(values[axis])
        mid = float(np.median(rhos))
        low, high = np.quantile(rhos, [0.025, 0.975])
        out["axes"][axis] = {
            "median": mid,
            "low": float(low),
            "high": float(high),
            # the full-length estimate is defined for a positive half-length correlation
            "spearman_brown": 2 * mid / (1 + mid) if mid > 0 else None,
            "draws": int(rhos.size),
        }
    return out


def _hl_bootstrap(d: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """PTEB's interval of the Hodges-Lehmann shift: the 2.5/97.5 percentiles of the shift
    over HL_BOOTSTRAP resamples of the differences."""
    shifts = []
    for _ in range(HL_BOOTSTRAP):
        sample = d[rng.integers(0, d.size, size=d.size)]
        i, j = np.triu_indices(sample.size)
        shifts.append(float(np.median((sample[i] + sample[j]) / 2.0)))
    low, high = np.quantile(shifts, [0.025, 0.975])
    return float(low), float(high)


def baseline_tests(
    datasets: list[ScoredUnit], baseline: str, seed: int = SEED
) -> list[BaselineTest]:
    """PTEB's comparison of each model with a baseline model, per transformation (and the
    original): the differences baseline minus model of the transformed scores (negative
    favours the model), tested two ways as PTEB reports them. "pooled": one observation
    per (dataset, seed), Wilcoxon signed-rank, Hodges-Lehmann shift with a percentile
    bootstrap interval. "run-averaged": one per dataset (seeds averaged first), Wilcoxon
    (exact when it can be), Hodges-Lehmann shift with its distribution-free interval.
    Holm's adjustment runs across the models, per transformation and way."""
    mine = {u.dataset: u for u in datasets if u.model == baseline}
    others = [m for m in dict.fromkeys(u.model for u in datasets) if m != baseline]
    names = ["original", *dict.fromkeys(t for u in mine.values() for t in u.transforms)]
    rng = np.random.default_rng(seed)
    rows: list[BaselineTest] = []
    for name in names:
        for way in ("pooled", "run-averaged"):
            first = len(rows)
            for model in others:
                diffs = _baseline_differences(datasets, mine, model, name, way)
                if len(diffs) < 2:
                    continue
                d = np.asarray(diffs)
                statistic, p, method = wilcoxon_signed_rank(d)
                shift, low, high, level = hodges_lehmann(d)
                if way == "pooled":
                    low, high = _hl_bootstrap(d, rng)
                    level = 0.95
                rows.append(
                    {
                        "transform": name, "way": way, "baseline": baseline, "model": model,
                        "n": int(d.size), "hodges_lehmann": shift, "ci_low": low,
                        "ci_high": high, "ci_level": level, "wilcoxon_statistic": statistic,
                        "p": p, "p_method": method,
                    }
                )  # fmt: skip
            adjusted = holm([r["p"] for r in rows[first:]])
            for r, p_holm in zip(rows[first:], adjusted, strict=True):
                r["p_holm"] = p_holm
    return rows


def _baseline_differences(
    datasets: list[ScoredUnit], mine: dict[str, ScoredUnit], model: str, name: str, way: str
) -> list[float]:
    diffs = []
    for u in datasets:
        base = mine.get(u.dataset)
        if u.model != model or base is None:
            continue
        if name == "original":
            if u.original is not None and base.original is not None:
                diffs.append(base.original - u.original)
        elif name in u.per_seed and name in base.per_seed:
            seeds = [s for s in base.per_seed[name] if s in u.per_seed[name]]
            if not seeds:
                continue
            gaps = [base.per_seed[name][s].score - u.per_seed[name][s].score for s in seeds]
            diffs.extend(gaps) if way == "pooled" else diffs.append(fmean(gaps))
    return diffs


def prompt_sensitivity(datasets: list[ScoredUnit]) -> list[PromptSensitivityRow]:
    """Per model and transformation with more than one prompt variant: each variant's
    delta (mean over datasets) and its spread over seeds (per seed, the mean delta over
    datasets; then the sample SD, min and max of those)."""
    rows: list[PromptSensitivityRow] = []
    for model in dict.fromkeys(u.model for u in datasets):
        mine = [u for u in datasets if u.model == model]
        names = dict.fromkeys(t for u in mine for t in u.transforms)
        base_of = {n: re.sub(r"-p\d+$", "", n) for n in names}
        for base in dict.fromkeys(base_of.values()):
            variants = [n for n in names if base_of[n] == base]
            if len(variants) < 2:
                continue
            for name in variants:
                having = [u for u in mine if name in u.transforms]
                seeds = dict.fromkeys(s for u in having for s in u.per_seed[name])
                per_seed = [
                    fmean(u.per_seed[name][s].delta for u in having if s in u.per_seed[name])
                    for s in seeds
                ]
                rows.append(
                    {
                        "model": model,
                        "transform": base,
                        "variant": name,
                        "prompt_variant": having[0].prompt_of.get(name, 1),
                        "delta": fmean(u.transforms[name].delta for u in having),
                        "seeds": len(per_seed),
                        "seed_sd": stdev(per_seed) if len(per_seed) > 1 else None,
                        "seed_min": min(per_seed),
                        "seed_max": max(per_seed),
                    }
                )
    return rows
