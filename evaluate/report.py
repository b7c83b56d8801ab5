"""From scored records to robustness figures: the axis aggregation, statistics and tables.

Records come per (model, config, split). Within a dataset subset, a config's main score is
averaged over its scored splits and a transformation's over its seeds. Each prompt variant
of a transformation (`paraphrase-p2`) is a transformation row of its own; the axes and the
total use the default prompt only. A dataset's figure is the mean over its subsets, and
every figure across datasets is the mean over datasets: an axis's score is the mean over
its transformations (Lexical/Stylistic, Length, Language), the total the unweighted mean
of the axes, the original excluded, as HTEB aggregates. Results scored under `--protocol
hteb` are averaged in HTEB's release's order instead (each transformation over datasets
first, then the axes; see `aggregation`).

Every variant figure comes as a score and as a paired delta (the variant's score minus the
original's on the same rows). The statistics follow HTEB and PTEB with one dataset as the
unit of observation (seeds and subsets averaged first); each is defined where it is
computed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import fmean, median, stdev
from typing import Any

import numpy as np

from shiftbench.core.stats import hodges_lehmann, holm, wilcoxon_signed_rank
from shiftbench.evaluate.resample import LEVEL, THIN_NOTE, tail_share, thin, usable_draws
from shiftbench.evaluate.sides import config_label, shift_summary

AXES = ("Lexical/Stylistic", "Length", "Language")
TOTAL = "total"
PROBE = ("mrr", "hits_at_1", "hits_at_3")
ALL_MODELS = "(all models)"
SPLIT_HALF_DRAWS = 1000
SEED = 0
HL_BOOTSTRAP = 1000  # PTEB's percentile bootstrap of the Hodges-Lehmann shift
PROMPT_IN_NAME = re.compile(r"-p(\d+)-s[^-.]+(?:\.|$)")


@dataclass
class Pair:
    """A variant figure: its score and its paired delta."""

    score: float
    delta: float


@dataclass
class Unit:
    """One model on one dataset (or one subset of it): the original's score and each
    transformation's, keyed by transformation name (`paraphrase`, `paraphrase-p2`)."""

    model: str
    dataset: str
    subset: str
    task_type: str
    # the source's identity (name and revision): run folders of one source (say, of two
    # generators) are one dataset in the figures over datasets
    source: tuple[str, str | None] = ("", None)
    original: float | None = None
    transforms: dict[str, Pair] = field(default_factory=dict)
    axis_of: dict[str, str] = field(default_factory=dict)
    seeds: dict[str, int] = field(default_factory=dict)
    # per transformation, seed -> its figure (averaged over splits, and subsets)
    per_seed: dict[str, dict[Any, Pair]] = field(default_factory=dict)
    # per transformation: its prompt variant (1 is the default prompt)
    prompt_of: dict[str, int] = field(default_factory=dict)
    # per transformation: the bootstrap deltas (the same item draws in every config, so
    # they average over seeds, splits, subsets and datasets and stay paired across models)
    replicates: dict[str, np.ndarray] = field(default_factory=dict)
    # per transformation: self-retrieval (mrr, hits_at_1, hits_at_3) and EvalRank figures
    probe: dict[str, dict[str, float]] = field(default_factory=dict)
    evalrank: dict[str, dict[str, float]] = field(default_factory=dict)
    # per transformation: the delta on the rows certified as faithful (`evaluate
    # --faithful`), with the criterion and the number of rows behind it
    faithful: dict[str, dict[str, Any]] = field(default_factory=dict)
    # per transformation: the items its interval rests on (its fewest over seeds)
    items: dict[str, int] = field(default_factory=dict)

    def default_prompt(self) -> list[str]:
        return [t for t in self.transforms if self.prompt_of.get(t, 1) == 1]

    def axes(self) -> dict[str, Pair]:
        by_axis: dict[str, list[Pair]] = defaultdict(list)
        for name in self.default_prompt():
            by_axis[self.axis_of[name]].append(self.transforms[name])
        return {
            axis: Pair(fmean(p.score for p in pairs), fmean(p.delta for p in pairs))
            for axis in AXES
            if (pairs := by_axis.get(axis))
        }

    def axis_items(self) -> dict[str, int]:
        """Per axis and for the total: the fewest items of the transformations in it."""
        by_axis: dict[str, list[int]] = defaultdict(list)
        for name in self.default_prompt():
            if name in self.items:
                by_axis[self.axis_of[name]].append(self.items[name])
        out = {axis: min(v) for axis, v in by_axis.items()}
        if out:
            out[TOTAL] = min(out.values())
        return out

    def total(self) -> Pair | None:
        axes = self.axes()
        if not axes:
            return None
        return Pair(fmean(p.score for p in axes.values()), fmean(p.delta for p in axes.values()))

    def axis_replicates(self) -> dict[str, np.ndarray]:
        """The bootstrap deltas of each axis and of the total, where every transformation
        behind them has some."""
        by_axis: dict[str, list[np.ndarray]] = defaultdict(list)
        complete: dict[str, bool] = defaultdict(lambda: True)
        for name in self.default_prompt():
            axis = self.axis_of[name]
            if name in self.replicates:
                by_axis[axis].append(self.replicates[name])
            else:
                complete[axis] = False
        out = {a: np.mean(r, axis=0) for a, r in by_axis.items() if complete[a]}
        if out and len(out) == len({self.axis_of[t] for t in self.default_prompt()}):
            out[TOTAL] = np.mean([out[a] for a in AXES if a in out], axis=0)
        return out


def dataset_labels(documents: Sequence[dict[str, Any]]) -> list[str]:
    """Each document's dataset name: the source's, or with the results' own label when
    two documents score the same source (say, run folders of two generators)."""
    names = [d["source"]["name"] for d in documents]
    return [
        n if names.count(n) == 1 else f"{n} ({d['target']})"
        for n, d in zip(names, documents, strict=True)
    ]


def prompt_variant(record: dict[str, Any]) -> int:
    """A record's prompt variant (1 is the default prompt): its own field, or read from
    the config name (`paraphrase-p2-s1`) of results written before records carried it."""
    variant = record.get("prompt_variant")
    if variant is None:
        found = PROMPT_IN_NAME.search(record["config"])
        variant = int(found.group(1)) if found else 1
    return int(variant)


def transform_name(record: dict[str, Any]) -> str:
    """`paraphrase` for the default prompt, `paraphrase-p2` for prompt variant 2."""
    variant = prompt_variant(record)
    return record["transform"] if variant == 1 else f"{record['transform']}-p{variant}"


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
                unit = _unit(model, label, subset, doc["task_type"], records)
                unit.source = source_identity(doc)
                out.append(unit)
    return out


def source_identity(document: dict[str, Any]) -> tuple[str, str | None]:
    """The source a results document scores: its name and revision."""
    return document["source"]["name"], document["source"].get("revision")


def shared_sources(documents: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sources that more than one results document scores, with those documents'
    dataset labels: each is one dataset in the figures over datasets."""
    labels: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    for doc, label in zip(documents, dataset_labels(documents), strict=True):
        labels[source_identity(doc)].append(label)
    return [
        {"source": name, "revision": revision, "merged": merged}
        for (name, revision), merged in labels.items()
        if len(merged) > 1
    ]


def _replicates(records: list[dict[str, Any]]) -> np.ndarray | None:
    arrays: list[list[float]] = [r.get("delta_replicates") or [] for r in records]
    if not arrays or any(not a for a in arrays) or len({len(a) for a in arrays}) != 1:
        return None
    return np.mean(np.asarray(arrays, dtype=np.float64), axis=0)


def _unit(model: str, dataset: str, subset: str, task_type: str, records: list[dict]) -> Unit:
    unit = Unit(model, dataset, subset, task_type)
    originals = [r["main_score"] for r in records if r["kind"] == "original"]
    unit.original = fmean(originals) if originals else None
    # transformation -> seed -> the records of that config (one per split)
    variants: dict[str, dict[Any, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        # a query-side or corpus-side record is in the table of the four only (sides.py)
        if r["kind"] == "transform" and r["delta"] is not None and not r.get("partial"):
            name = transform_name(r)
            variants[name][r["seed"]].append(r)
            unit.axis_of[name] = r["axis"]
            unit.prompt_of[name] = prompt_variant(r)
    for name, seeds in variants.items():
        per_seed = {
            seed: Pair(fmean(r["main_score"] for r in rs), fmean(r["delta"] for r in rs))
            for seed, rs in seeds.items()
        }
        unit.per_seed[name] = per_seed
        unit.transforms[name] = Pair(
            fmean(p.score for p in per_seed.values()), fmean(p.delta for p in per_seed.values())
        )
        unit.seeds[name] = len(per_seed)
        unit.items[name] = min(sum(r["rows"] for r in rs) for rs in seeds.values())
        replicates = _replicates([r for rs in seeds.values() for r in rs])
        if replicates is not None:
            unit.replicates[name] = replicates
        flat = [r for rs in seeds.values() for r in rs]
        retrieval = [
            r["self_retrieval"] for r in flat if (r.get("self_retrieval") or {}).get("pairs")
        ]
        if retrieval:
            unit.probe[name] = {k: fmean(p[k] for p in retrieval) for k in PROBE}
        ranked = [r["evalrank"] for r in flat if (r.get("evalrank") or {}).get("pairs")]
        if ranked:
            unit.evalrank[name] = _evalrank_figures(ranked)
        certified = [r["faithful"] for r in flat if r.get("faithful")]
        if certified:
            unit.faithful[name] = _faithful_figures(certified, seeds)
    return unit


def _faithful_figures(
    records: list[dict[str, Any]], seeds: dict[Any, list[dict[str, Any]]]
) -> dict[str, Any]:
    """The delta on certified rows, averaged as the full delta is (splits, then seeds);
    None when some config had too few certified rows to score."""
    per_seed: list[float] = []
    for rs in seeds.values():
        figures = [r.get("faithful") or {} for r in rs]
        if any(f.get("delta") is None for f in figures):
            per_seed = []
            break
        per_seed.append(fmean(f["delta"] for f in figures))
    return {
        "criterion": records[0]["criterion"],
        "rows": sum(r["rows"] for r in records),
        "delta": fmean(per_seed) if per_seed else None,
    }


def _evalrank_figures(records: list[dict[str, Any]]) -> dict[str, float]:
    """EvalRank's cosine MRR and Hits@1/3 of a variant, and its MRR delta against the
    original on the same rows, averaged over the variant's records."""
    out = {k: fmean(r["cosine"][k] for r in records) for k in PROBE}
    paired = [
        r["original_same_rows"]["cosine"]["mrr"] for r in records if r.get("original_same_rows")
    ]
    if len(paired) == len(records):
        out["delta_mrr"] = out["mrr"] - fmean(paired)
    return out


def _mean_pair(pairs: Sequence[Pair]) -> Pair:
    return Pair(fmean(p.score for p in pairs), fmean(p.delta for p in pairs))


def dataset_units(all_units: list[Unit]) -> list[Unit]:
    """One unit per (model, dataset): its subsets averaged (a multilingual dataset counts
    once, as HTEB counts it), figure by figure over the subsets that have it; then the run
    folders of one source (results documents with the same source name and revision, say
    of two generators) averaged the same way, so that a source is one observation in the
    figures over datasets, never two."""
    # a dataset's subsets hold different items; run folders of one source, the same ones
    documents = _merge_groups(all_units, lambda u: (u.model, u.dataset), "subsets", sum)
    return _merge_groups(documents, lambda u: (u.model, u.source), "run folders", max)


def _merge_groups(
    units: list[Unit], key: Callable[[Unit], Any], what: str, items: Callable[[list[int]], int]
) -> list[Unit]:
    groups: dict[Any, list[Unit]] = defaultdict(list)
    for u in units:
        groups[key(u)].append(u)
    return [
        parts[0] if len(parts) == 1 else _merged(parts, f"{len(parts)} {what}", items)
        for parts in groups.values()
    ]


def _merged(parts: list[Unit], label: str, items: Callable[[list[int]], int]) -> Unit:
    """Units of one model averaged figure by figure, each over the parts that have it
    (their items combined by `items`). Parts of one dataset keep its name; run folders of
    one source take the source's."""
    first = parts[0]
    names = {u.dataset for u in parts}
    dataset = first.dataset if len(names) == 1 else first.source[0]
    merged = Unit(first.model, dataset, label, first.task_type, first.source)
    originals = [u.original for u in parts if u.original is not None]
    merged.original = fmean(originals) if originals else None
    for name in dict.fromkeys(t for u in parts for t in u.transforms):
        having = [u for u in parts if name in u.transforms]
        merged.transforms[name] = _mean_pair([u.transforms[name] for u in having])
        merged.axis_of[name] = having[0].axis_of[name]
        merged.prompt_of[name] = having[0].prompt_of.get(name, 1)
        merged.seeds[name] = max(u.seeds[name] for u in having)
        if all(name in u.items for u in having):
            merged.items[name] = items([u.items[name] for u in having])
        seeds = dict.fromkeys(s for u in having for s in u.per_seed[name])
        merged.per_seed[name] = {
            s: _mean_pair([u.per_seed[name][s] for u in having if s in u.per_seed[name]])
            for s in seeds
        }
        if all(name in u.replicates for u in having):
            merged.replicates[name] = np.mean([u.replicates[name] for u in having], axis=0)
        for attr in ("probe", "evalrank"):
            figures = [getattr(u, attr)[name] for u in having if name in getattr(u, attr)]
            if figures:
                keys = set.intersection(*(set(f) for f in figures))
                getattr(merged, attr)[name] = {k: fmean(f[k] for f in figures) for k in keys}
        certified = [u.faithful[name] for u in having if name in u.faithful]
        if certified:
            merged.faithful[name] = _merge_faithful(certified, len(having))
    return merged


def _merge_faithful(figures: list[dict[str, Any]], expected: int) -> dict[str, Any]:
    """Certified-row figures of several subsets or datasets: rows added, deltas averaged
    (None unless every one of the `expected` parts has one)."""
    deltas = [f["delta"] for f in figures if f["delta"] is not None]
    return {
        "criterion": figures[0]["criterion"],
        "rows": sum(f["rows"] for f in figures),
        "delta": fmean(deltas) if len(deltas) == expected else None,
    }


def _interval(
    replicates: np.ndarray | None, method: str = "percentile", items: int | None = None
) -> list[float] | None:
    """The 95% interval of bootstrap replicates, by evaluate's method (resample.interval)."""
    share = tail_share(LEVEL, method, items)
    if replicates is None or share is None or not np.isfinite(replicates).any():
        return None
    # a draw undefined in any config behind the figure (NaN) is left out, as evaluate
    # leaves it out of a single delta's interval
    levels = [0.025, 0.975] if method != "expanded" else [share, 1 - share]
    low, high = np.nanquantile(replicates, levels)
    return [float(low), float(high)]


def interval_method(documents: Sequence[dict[str, Any]]) -> str:
    """The interval method the documents' records were made with (one for all of them)."""
    from shiftbench.errors import InputError

    methods = {
        r.get("interval", "percentile")
        for d in documents
        for entry in d["models"]
        for r in entry["results"]
        if r.get("ci95") is not None
    }
    if len(methods) > 1:
        raise InputError(
            f"the results mix interval methods ({', '.join(sorted(methods))}): evaluate "
            "them again with one --interval"
        )
    return methods.pop() if methods else "percentile"


def _mean_replicates(arrays: list[np.ndarray | None]) -> np.ndarray | None:
    if not arrays or any(a is None for a in arrays):
        return None
    return np.mean(np.asarray(arrays), axis=0)


def _figure(
    pairs: Sequence[Pair],
    replicates: list[np.ndarray | None],
    items: list[int | None],
    method: str = "percentile",
) -> dict[str, Any]:
    """A mean score and delta over datasets, with the delta's 95% interval when every
    dataset has bootstrap replicates, the draws it rests on, and the datasets' items."""
    total = None if any(i is None for i in items) else sum(i for i in items if i)
    return _figure_of(_mean_pair(pairs), _mean_replicates(replicates), total, method)


def _figure_of(
    mean: Pair, joint: np.ndarray | None, items: int | None, method: str
) -> dict[str, Any]:
    """A figure's record: its score and delta, the delta's interval from `joint` (the
    bootstrap deltas, if any), the draws it rests on and its items."""
    return {
        "score": mean.score,
        "delta": mean.delta,
        "ci95": _interval(joint, method, items),
        "resamples": None if joint is None else int(joint.size),
        "usable_draws": None if joint is None else usable_draws(joint),
        "items": items,
    }


def _fewest(counts: list[int | None]) -> int | None:
    """The fewest items among figures (None when one of them has no count)."""
    return None if any(c is None for c in counts) else min(c for c in counts if c)


# How axes and totals are averaged over datasets: each dataset's axes first, then their
# mean over datasets (shiftbench's); or, as HTEB's release does (`hteb/score_tables.py`),
# each transformation's mean over the datasets that have it first, then the axes over
# those means. They differ only where a dataset lacks a transformation.
PER_DATASET = "per-dataset"
TRANSFORMATIONS_FIRST = "transformations-first"


def aggregation(documents: Sequence[dict[str, Any]]) -> str:
    """HTEB's order when every results document was scored under `--protocol hteb`."""
    names = {(d.get("protocol") or {}).get("name") for d in documents}
    return TRANSFORMATIONS_FIRST if names == {"hteb"} else PER_DATASET


def _transformations_first(
    transforms: dict[str, dict[str, Any]], mine: list[Unit], method: str
) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """Axes and the total from the transformations' means over datasets (default prompts)."""

    def combined(names: list[str]) -> tuple[Pair, np.ndarray | None, int | None]:
        pairs = [Pair(transforms[t]["score"], transforms[t]["delta"]) for t in names]
        joint = [
            _mean_replicates([u.replicates.get(t) for u in mine if t in u.transforms])
            for t in names
        ]
        items = _fewest([transforms[t]["items"] for t in names])
        return _mean_pair(pairs), _mean_replicates(joint), items

    parts = {}
    for axis in AXES:
        names = [t for t, row in transforms.items()
                 if row["axis"] == axis and row["prompt_variant"] == 1]  # fmt: skip
        if names:
            parts[axis] = combined(names)
    if not parts:
        return {}, None
    axes = {axis: _figure_of(*part, method) for axis, part in parts.items()}
    total = _figure_of(
        _mean_pair([p for p, _, _ in parts.values()]),
        _mean_replicates([j for _, j, _ in parts.values()]),
        _fewest([c for _, _, c in parts.values()]),
        method,
    )
    return axes, total


def model_summary(
    datasets: list[Unit], method: str = "percentile", order: str = PER_DATASET
) -> dict[str, dict[str, Any]]:
    """Per model: the original, each transformation, each axis and the total, averaged
    over the datasets that have them (in `order`), each delta with its 95% interval."""
    out: dict[str, dict[str, Any]] = {}
    for model in dict.fromkeys(u.model for u in datasets):
        mine = [u for u in datasets if u.model == model]
        names = dict.fromkeys(t for u in mine for t in u.transforms)
        originals = [u.original for u in mine if u.original is not None]
        transforms = {}
        for t in names:
            having = [u for u in mine if t in u.transforms]
            row: dict[str, Any] = {
                "axis": having[0].axis_of[t],
                "prompt_variant": having[0].prompt_of.get(t, 1),
                **_figure(
                    [u.transforms[t] for u in having],
                    [u.replicates.get(t) for u in having],
                    [u.items.get(t) for u in having],
                    method,
                ),
            }
            for attr, key in (("probe", "self_retrieval"), ("evalrank", "evalrank")):
                figures = [getattr(u, attr)[t] for u in having if t in getattr(u, attr)]
                if figures:
                    keys = set.intersection(*(set(f) for f in figures))
                    row[key] = {k: fmean(f[k] for f in figures) for k in sorted(keys)}
            certified = [u.faithful[t] for u in having if t in u.faithful]
            if certified:
                row["faithful"] = _merge_faithful(certified, len(having))
            transforms[t] = row
        axes = {}
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


def _rank_intervals(summary: dict[str, dict[str, Any]]) -> None:
    """Give each model's axis and total deltas a rank interval: a model ranks ahead of
    another only when its whole 95% interval lies above the other's, so models whose
    intervals overlap share ranks (rank 1 = the smallest drop)."""
    for axis in (None, *AXES):
        holders = {
            m: (s["total"] if axis is None else s["axes"].get(axis)) for m, s in summary.items()
        }
        ranked = {m: f for m, f in holders.items() if f and f.get("ci95")}
        if len(ranked) < 2:
            continue
        for m, f in ranked.items():
            low, high = f["ci95"]
            above = sum(1 for o, g in ranked.items() if o != m and g["ci95"][0] > high)
            below = sum(1 for o, g in ranked.items() if o != m and g["ci95"][1] < low)
            f["rank"] = [1 + above, len(ranked) - below]


def _observations(datasets: list[Unit], model: str, name: str) -> list[float]:
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


def transform_tests(datasets: list[Unit], level: float = 0.95) -> list[dict[str, Any]]:
    """Per model and transformation, over datasets: the Wilcoxon signed-rank test of the
    paired deltas, their Hodges-Lehmann shift with its confidence interval, and Holm's
    adjustment across the model's transformations. With several models, the same again
    as "(all models)" on one delta per dataset, the mean over the models (HTEB)."""
    rows: list[dict[str, Any]] = []
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


def median_absolute_differences(datasets: list[Unit]) -> list[dict[str, Any]]:
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
    rows = []
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


def _columns(datasets: list[Unit]) -> list[tuple[str, str]]:
    names = dict.fromkeys(t for u in datasets for t in u.transforms)
    axes = [a for a in AXES if any(a in u.axes() for u in datasets)]
    return [*((n, "transform") for n in names), *((a, "axis") for a in axes), (TOTAL, "total")]


def _score_of(u: Unit, of: str, kind: str) -> float | None:
    if kind == "transform":
        return u.transforms[of].score if of in u.transforms else None
    if kind == "axis":
        pair = u.axes().get(of)
        return pair.score if pair else None
    total = u.total()
    return total.score if total else None


def kendall_per_dataset(datasets: list[Unit]) -> list[dict[str, Any]]:
    """HTEB's ranking stability: per dataset, Kendall's tau-b between the models' scores on
    the original and on a transformation (or an axis, or the total); the mean and sample
    SD of those taus over datasets. Datasets where a side is constant (tau undefined) or
    fewer than two models have both scores are left out and counted."""
    from scipy.stats import kendalltau

    by_dataset: dict[str, list[Unit]] = defaultdict(list)
    for u in datasets:
        by_dataset[u.dataset].append(u)
    rows = []
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


def ranking_agreement(summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Pooled Kendall's tau-b: between the models' ranking on the original and on each
    transformation and axis, with every score first averaged over datasets (not HTEB's
    per-dataset figure; kept as a summary of the overall ranking). Two models or more."""
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
    if all(summary[m]["total"] for m in models):
        columns[TOTAL] = ("total", TOTAL)
    out = []
    for label, (kind, key) in columns.items():
        if kind == "total":
            shifted = [summary[m]["total"]["score"] for m in models]
        else:
            group = "transforms" if kind == "transform" else "axes"
            if not all(key in summary[m][group] for m in models):
                continue
            shifted = [summary[m][group][key]["score"] for m in models]
        tau, p = kendalltau(original, shifted)
        out.append(
            {"of": label, "kind": kind, "models": len(models), "tau": float(tau), "p": float(p)}
        )
    return out


def _halves(by_type: dict[str, list[str]], rng: np.random.Generator) -> tuple[set[str], set[str]]:
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
    datasets: list[Unit], draws: int = SPLIT_HALF_DRAWS, seed: int = SEED, on: str = "score"
) -> dict[str, Any] | None:
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
        half_a, half_b = _halves(by_type, rng)
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
    out: dict[str, Any] = {"on": on, "draws": draws, "datasets": len(names), "models": len(models)}
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


def baseline_tests(datasets: list[Unit], baseline: str, seed: int = SEED) -> list[dict[str, Any]]:
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
    rows: list[dict[str, Any]] = []
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
    datasets: list[Unit], mine: dict[str, Unit], model: str, name: str, way: str
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


def prompt_sensitivity(datasets: list[Unit]) -> list[dict[str, Any]]:
    """Per model and transformation with more than one prompt variant: each variant's
    delta (mean over datasets) and its spread over seeds (per seed, the mean delta over
    datasets; then the sample SD, min and max of those)."""
    rows = []
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


@dataclass
class ReportSettings:
    """What a report computes beyond the defaults."""

    baseline: str | None = None
    split_half_draws: int = SPLIT_HALF_DRAWS
    seed: int = SEED


def summarise(
    documents: list[dict[str, Any]], settings: ReportSettings | None = None
) -> dict[str, Any]:
    """Everything the report shows, as data (it is also written as summary.json)."""
    settings = settings or ReportSettings()
    subset_units = units(documents)
    datasets = dataset_units(subset_units)
    method = interval_method(documents)
    order = aggregation(documents)
    summary = model_summary(datasets, method, order)
    models = list(summary)
    if settings.baseline is not None and settings.baseline not in models:
        from shiftbench.errors import InputError

        raise InputError(
            f"--baseline {settings.baseline} is not among the models: {', '.join(models)}"
        )
    sides = shift_summary(documents, dataset_labels(documents), transform_name)
    return {
        "datasets": dataset_labels(documents),
        **({"shared_sources": shared} if (shared := shared_sources(documents)) else {}),
        **({"sides": sides} if sides else {}),
        "interval": method,
        "aggregation": order,
        "units": [_unit_record(u, method) for u in subset_units],
        "models": summary,
        "tests": transform_tests(datasets),
        "baseline_tests": baseline_tests(datasets, settings.baseline, settings.seed)
        if settings.baseline
        else [],
        "median_abs_delta": median_absolute_differences(datasets),
        "kendall_per_dataset": kendall_per_dataset(datasets),
        "kendall": ranking_agreement(summary),
        "split_half": split_half_reliability(datasets, settings.split_half_draws, settings.seed),
        "split_half_delta": split_half_reliability(
            datasets, settings.split_half_draws, settings.seed, on="delta"
        ),
        "prompt_sensitivity": prompt_sensitivity(datasets),
    }


def _unit_record(u: Unit, method: str) -> dict[str, Any]:
    return {
        "model": u.model,
        "dataset": u.dataset,
        "subset": u.subset,
        "task_type": u.task_type,
        "original": u.original,
        "transforms": {
            t: {
                "axis": u.axis_of[t],
                "prompt_variant": u.prompt_of.get(t, 1),
                "seeds": u.seeds[t],
                **vars(p),
                "ci95": _interval(u.replicates.get(t), method, u.items.get(t)),
                **({"self_retrieval": u.probe[t]} if t in u.probe else {}),
                **({"evalrank": u.evalrank[t]} if t in u.evalrank else {}),
                **({"faithful": u.faithful[t]} if t in u.faithful else {}),
            }
            for t, p in u.transforms.items()
        },
    }


# --- tables ----------------------------------------------------------------------------------


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return ""
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def _delta(figure: dict[str, Any] | None) -> str:
    """`-0.0123 [-0.0200, -0.0050]`: a delta with its 95% interval when it has one, and
    `*` after a thin one (THIN_NOTE)."""
    if not figure:
        return ""
    text = _num(figure.get("delta"), True)
    if figure.get("ci95"):
        low, high = figure["ci95"]
        text += f" [{low:+.4f}, {high:+.4f}]"
        items = figure.get("items", figure.get("rows"))
        if thin(items, figure.get("usable_draws"), figure.get("resamples")):
            text += "*"
    return text


def _rank(figure: dict[str, Any] | None) -> str:
    if not figure or "rank" not in figure:
        return ""
    low, high = figure["rank"]
    return str(low) if low == high else f"{low}-{high}"


@dataclass
class Table:
    """One table of the report: a title, a sentence saying what it shows, and the rows."""

    title: str
    note: str
    header: list[str]
    rows: list[list[str]]
    left: int = 1


def axis_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The axis table: per model, the original, each axis (score, delta with its 95%
    interval), the total, and the rank interval of the total delta when there is one."""
    models = summary["models"]
    axes = [a for a in AXES if any(a in s["axes"] for s in models.values())]
    ranked = any(_rank(s["total"]) for s in models.values())
    header = ["model", "original"]
    for axis in axes:
        header += [axis, "delta"]
    header += ["total", "delta"] + (["rank"] if ranked else [])
    rows = []
    for model, s in models.items():
        row = [model, _num(s["original"])]
        for axis in axes:
            pair = s["axes"].get(axis)
            row += [_num(pair and pair["score"]), _delta(pair)]
        total = s["total"]
        row += [_num(total and total["score"]), _delta(total)] + ([_rank(total)] if ranked else [])
        rows.append(row)
    return header, rows


def report_tables(summary: dict[str, Any]) -> list[Table]:
    """Every table of the report after the axis table, in order; empty ones left out."""
    tables = [_shared_table(summary)]
    tables += [_transform_table(summary), _sides_table(summary), _faithful_table(summary)]
    tables += [_prompt_table(summary)]
    tables += [_tests_table(summary)]
    tables += [_baseline_table(summary), _mad_table(summary), _kendall_table(summary)]
    tables += [
        _split_half_table(summary, "split_half"),
        _split_half_table(summary, "split_half_delta"),
    ]
    return [t for t in tables if t.rows]


def _shared_table(summary: dict[str, Any]) -> Table:
    rows = [
        [s["source"], s["revision"] or "-", ", ".join(s["merged"])]
        for s in summary.get("shared_sources", [])
    ]
    return Table(
        "Run folders of one source",
        "Results of the same source (name and revision) count as one dataset in every "
        "figure over datasets (means, tests, Kendall's tau, split-half): their figures are "
        "averaged, as a dataset's subsets are. Each keeps its own section below.",
        ["source", "revision", "results"],
        rows,
        left=3,
    )


def _transform_table(summary: dict[str, Any]) -> Table:
    rows = []
    for m, s in summary["models"].items():
        for t, v in s["transforms"].items():
            er = v.get("evalrank", {})
            sr = v.get("self_retrieval", {})
            rows.append(
                [m, t, v["axis"], _num(v.get("score")), _delta(v), _num(er.get("mrr")),
                 _num(er.get("delta_mrr"), True), _num(sr.get("mrr")), _num(sr.get("hits_at_1"))]
            )  # fmt: skip
    return Table(
        "Transformations",
        "Mean over seeds, subsets and datasets; delta = variant minus the original on the "
        "same rows, with its 95% paired bootstrap interval. EvalRank (STS sources): MRR "
        "of each gold top-quartile pair's partner against every sentence of the split "
        "(cosine), and its change against the original on the same rows. Self-retrieval: "
        "MRR and Hits@1 of each rewrite's own original among all originals of its split.",
        ["model", "transform", "axis", "score", "delta [95% CI]", "EvalRank MRR",
         "EvalRank ΔMRR", "self-retrieval MRR", "Hits@1"],
        rows,
        left=3,
    )  # fmt: skip


def _sides_table(summary: dict[str, Any]) -> Table:
    rows = []
    for v in summary.get("sides", []):
        cells = [_side(v[c]) for c in ("corpus_side", "query_side", "both_sides")]
        rows += [[v["model"], v["transform"], "original", _num(v["original"]), cells[0]]]
        rows += [[v["model"], v["transform"], "rewritten", cells[1], cells[2]]]
    return Table(
        "Query-side and corpus-side shift",
        "Ranking datasets whose corpus was rewritten too (gen --rewrite queries,corpus): "
        "the main score with original or rewritten queries (rows) against the original or "
        "rewritten corpus (columns), all four on the same queries and documents (those "
        "whose rewrites are usable), with each delta against the original of the four. "
        "Mean over seeds, splits and subsets, then over datasets.",
        ["model", "transform", "queries", "corpus original", "corpus rewritten"],
        rows,
        left=3,
    )


def _side(figure: dict[str, Any] | None) -> str:
    if not figure:
        return ""
    return f"{figure['score']:.4f} ({figure['delta']:+.4f})"


def _faithful_table(summary: dict[str, Any]) -> Table:
    rows = [
        [m, t, v["faithful"]["criterion"], _delta(v), str(v["faithful"]["rows"]),
         _num(v["faithful"]["delta"], True) if v["faithful"]["delta"] is not None
         else "too few rows"]
        for m, s in summary["models"].items()
        for t, v in s["transforms"].items()
        if "faithful" in v
    ]  # fmt: skip
    return Table(
        "Faithful rewrites only",
        "Each transformation scored again on the rows whose every rewritten text passes "
        "the criterion (evaluate --faithful), against the original on the same rows, "
        "beside the delta on all usable rows: a drop that shrinks here came from rewrites "
        "that lost the meaning, one that stays is the encoder's. Certified rows are summed "
        "over seeds, subsets and datasets; 'too few rows' when a config behind the figure "
        "had too few to score.",
        ["model", "transform", "criterion", "delta (all rows)", "certified rows",
         "delta (certified)"],
        rows,
        left=3,
    )  # fmt: skip


def _prompt_table(summary: dict[str, Any]) -> Table:
    rows = [
        [r["model"], r["transform"], r["variant"], str(r["seeds"]), _num(r["delta"], True),
         _num(r["seed_sd"]), f"{r['seed_min']:+.4f} .. {r['seed_max']:+.4f}"]
        for r in summary.get("prompt_sensitivity", [])
    ]  # fmt: skip
    return Table(
        "Prompt sensitivity",
        "Each prompt variant of a transformation as its own row: its delta (mean over "
        "datasets) and its spread over seeds (per seed the mean delta over datasets; SD "
        "and range). Axes and totals use the default prompt only.",
        ["model", "transform", "variant", "seeds", "delta", "SD over seeds", "seed range"],
        rows,
        left=3,
    )


def _tests_table(summary: dict[str, Any]) -> Table:
    rows = [
        [t["model"], t["transform"], str(t["n"]), _num(t["hodges_lehmann"], True),
         f"[{t['ci_low']:+.4f}, {t['ci_high']:+.4f}]", f"{t['ci_level']:.3f}",
         f"{t['wilcoxon_statistic']:g}", f"{t['p']:.4g}", t["p_method"], f"{t['p_holm']:.4g}"]
        for t in summary["tests"]
        if t["n"] >= 2
    ]  # fmt: skip
    return Table(
        "Tests over datasets",
        "One observation per dataset (seeds and subsets averaged; '(all models)': the mean "
        "over models per dataset, as HTEB): Wilcoxon signed-rank test of the deltas (p by: "
        "exact, permutation or normal, as scipy's default chooses), Hodges-Lehmann shift "
        "with its distribution-free interval and the level it reaches, Holm across each "
        "group's transformations.",
        ["model", "transform", "n", "HL shift", "CI", "level", "W", "p", "p by", "p (Holm)"],
        rows,
        left=2,
    )


def _baseline_table(summary: dict[str, Any]) -> Table:
    rows = [
        [t["transform"], t["way"], t["model"], str(t["n"]), _num(t["hodges_lehmann"], True),
         f"[{t['ci_low']:+.4f}, {t['ci_high']:+.4f}]", f"{t['p']:.4g}", t["p_method"],
         f"{t['p_holm']:.4g}"]
        for t in summary.get("baseline_tests", [])
    ]  # fmt: skip
    baseline = next((t["baseline"] for t in summary.get("baseline_tests", [])), "")
    return Table(
        f"Models against the baseline {baseline}",
        "PTEB's test: differences baseline minus model of the transformed scores (negative "
        "favours the model). pooled: one per (dataset, seed), HL interval by percentile "
        "bootstrap (1000); run-averaged: one per dataset, distribution-free HL interval. "
        "Wilcoxon signed-rank p (p by: exact, permutation or normal, as scipy's default "
        "chooses), Holm across models.",
        ["transform", "way", "model", "n", "HL shift", "CI", "p", "p by", "p (Holm)"],
        rows,
        left=3,
    )


def _mad_table(summary: dict[str, Any]) -> Table:
    rows = [
        [r["of"], r["kind"], str(r["n"]), _num(r["median_abs_delta"])]
        for r in summary.get("median_abs_delta", [])
    ]
    return Table(
        "Median absolute difference",
        "HTEB's |Δ̃|: per dataset and transformation the delta averaged over models; the "
        "median of its absolute value over datasets (per axis: over every dataset and "
        "transformation of the axis).",
        ["of", "kind", "n", "median |delta|"],
        rows,
        left=2,
    )


def _kendall_table(summary: dict[str, Any]) -> Table:
    pooled = {k["of"]: k for k in summary.get("kendall", [])}
    rows = []
    for k in summary.get("kendall_per_dataset", []):
        sd = f" ± {k['sd_tau']:.3f}" if k["sd_tau"] is not None else ""
        mean = f"{k['mean_tau']:+.3f}{sd}" if k["mean_tau"] is not None else ""
        rows.append(
            [k["of"], k["kind"], str(k["datasets"]), mean, str(k["undefined"]),
             f"{pooled[k['of']]['tau']:+.3f}" if k["of"] in pooled else ""]
        )  # fmt: skip
    return Table(
        "Ranking stability (Kendall's tau)",
        "HTEB's: per dataset, tau-b between the models' original and transformed scores; "
        "mean ± sample SD over datasets (undefined: datasets where a side is constant). "
        "pooled: one tau on scores averaged over datasets first.",
        ["of", "kind", "datasets", "mean tau ± SD", "undefined", "pooled tau"],
        rows,
        left=2,
    )


def _split_half_table(summary: dict[str, Any], key: str) -> Table:
    half = summary.get(key)
    rows = []
    if half:
        for axis, v in half["axes"].items():
            rows.append(
                [axis, f"{v['median']:+.3f}", f"[{v['low']:+.3f}, {v['high']:+.3f}]",
                 _num(v["spearman_brown"], True), f"{v['draws']}/{half['draws']}"]
            )  # fmt: skip
    what = "axis scores (HTEB's)" if key == "split_half" else "axis deltas"
    return Table(
        f"Split-half reliability, {what}",
        "Per axis: Spearman's rho across models between two task-stratified random halves "
        "of the datasets (each model's mean over a half); median and 95% range over the "
        "seeded splits, and the Spearman-Brown full-length value of the median.",
        ["axis", "median rho", "95% range", "Spearman-Brown", "draws"],
        rows,
    )


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


def text_report(summary: dict[str, Any]) -> str:
    """The report for a terminal: the axis table, then every statistics table."""
    axis_table = axis_rows(summary)
    parts = [plain_table(*axis_table)]
    tables = report_tables(summary)
    for table in tables:
        parts += ["", f"{table.title}:", plain_table(table.header, table.rows)]
    if _flagged([axis_table[1], *(t.rows for t in tables)]):
        parts += ["", THIN_NOTE]
    return "\n".join(parts)


def _flagged(tables: list[list[list[str]]]) -> bool:
    """Whether a table cell holds a thin interval (`... [lo, hi]*`)."""
    return any(cell.endswith("]*") for rows in tables for row in rows for cell in row)


def markdown_report(documents: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    """The Markdown report: the axis table, the statistics, every config's figures."""
    parts = ["# Robustness report", ""]
    parts.append(f"Datasets: {', '.join(summary['datasets'])}.")
    parts += ["", "## Scores by axis", ""]
    parts.append(
        "Mean over seeds, then over the transformations of an axis (default prompts); total "
        "= unweighted mean of the axes; every figure the mean over datasets"
        + (
            " (each transformation's first, then the axes, as HTEB's release averages)"
            if summary.get("aggregation") == TRANSFORMATIONS_FIRST
            else ""
        )
        + ". delta = variant minus the original on the same rows, with its 95% paired "
        "bootstrap interval; rank: models whose total-delta intervals overlap share ranks."
    )
    axis_table = axis_rows(summary)
    parts += ["", markdown_table(*axis_table), ""]
    if _flagged([axis_table[1]]):
        parts += [THIN_NOTE, ""]
    for table in report_tables(summary):
        parts += [f"## {table.title}", "", table.note, ""]
        parts += [markdown_table(table.header, table.rows, left=table.left), ""]
        if _flagged([table.rows]):
            parts += [THIN_NOTE, ""]
    if not any(t["n"] >= 2 for t in summary["tests"]):
        parts += ["The tests need two datasets or more; this report has one.", ""]
    if not summary.get("split_half"):
        parts += ["Split-half reliability needs two datasets or more and three models.", ""]
    for doc, label in zip(documents, summary["datasets"], strict=True):
        parts += [f"## {label}: {doc['task_type']}, {doc['main_score']}", ""]
        header = ["model", "config", "split", "rows", "score", "original (same rows)", "delta"]
        rows = [
            [
                entry["model"]["id"], config_label(r), r["split"], str(r["rows"]),
                _num(r["main_score"]), _num(r["original_same_rows"]), _delta(r),
            ]
            for entry in doc["models"]
            for r in entry["results"]
        ]  # fmt: skip
        parts += [markdown_table(header, rows, left=3), ""]
        if _flagged([rows]):
            parts += [THIN_NOTE, ""]
    return "\n".join(parts).rstrip() + "\n"
