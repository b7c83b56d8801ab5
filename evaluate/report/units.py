"""Units of a report: the records of one (model, dataset, subset) gathered, averaged over
seeds and splits, merged into datasets, and the figures (score, paired delta, interval)
of every transformation, axis and total; the two orders of means (`aggregation`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any, Literal

import numpy as np

from shiftbench.core.protocols import protocol_name
from shiftbench.core.records import (
    EvalRankRecord,
    FaithfulRecord,
    ResultsDocument,
    ScoreRecord,
    present,
)
from shiftbench.core.report_rows import FaithfulFigure, FigureRecord, SharedSource, TransformFigure
from shiftbench.errors import InputError
from shiftbench.evaluate.resample import LEVEL, tail_share, usable_draws

AXES = ("Lexical/Stylistic", "Length", "Language")
TOTAL = "total"
PROBE: tuple[Literal["mrr", "hits_at_1", "hits_at_3"], ...] = ("mrr", "hits_at_1", "hits_at_3")
ALL_MODELS = "(all models)"
SPLIT_HALF_DRAWS = 1000
SEED = 0
HL_BOOTSTRAP = 1000  # PTEB's percentile bootstrap of the Hodges-Lehmann shift


@dataclass
class Pair:
    """A variant figure: its score and its paired delta."""

    score: float
    delta: float


@dataclass
class ScoredUnit:
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
    faithful: dict[str, FaithfulFigure] = field(default_factory=dict)
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


def dataset_labels(documents: Sequence[ResultsDocument]) -> list[str]:
    """Each document's dataset name: the source's, or with the results' own label when
    two documents score the same source (say, run folders of two generators)."""
    names = [d["source"]["name"] for d in documents]
    return [
        n if names.count(n) == 1 else f"{n} ({d['target']})"
        for n, d in zip(names, documents, strict=True)
    ]


def prompt_variant(record: ScoreRecord) -> int:
    """A record's prompt variant: 1 is the default prompt (and the original's). Results
    written before records carried it get it from read_results."""
    variant = record.get("prompt_variant")
    return 1 if variant is None else int(variant)


def transform_name(record: ScoreRecord) -> str:
    """`paraphrase` for the default prompt, `paraphrase-p2` for prompt variant 2."""
    variant = prompt_variant(record)
    name = str(record["transform"])
    return name if variant == 1 else f"{name}-p{variant}"


def scored_units(documents: Sequence[ResultsDocument]) -> list[ScoredUnit]:
    """Every (model, dataset, subset) of the results documents, aggregated over splits
    and seeds."""
    out: list[ScoredUnit] = []
    for doc, label in zip(documents, dataset_labels(documents), strict=True):
        for entry in doc["models"]:
            model = entry["model"]["id"]
            by_subset: dict[str, list[ScoreRecord]] = defaultdict(list)
            for record in entry["results"]:
                by_subset[record["subset"]].append(record)
            for subset, records in by_subset.items():
                unit = _unit(model, label, subset, doc["task_type"], records)
                unit.source = source_identity(doc)
                out.append(unit)
    return out


def source_identity(document: ResultsDocument) -> tuple[str, str | None]:
    """The source a results document scores: its name and revision."""
    return document["source"]["name"], document["source"].get("revision")


def shared_sources(documents: Sequence[ResultsDocument]) -> list[SharedSource]:
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


def _replicates(records: list[ScoreRecord]) -> np.ndarray | None:
    arrays: list[list[float | None]] = [r.get("delta_replicates") or [] for r in records]
    if not arrays or any(not a for a in arrays) or len({len(a) for a in arrays}) != 1:
        return None
    return np.mean(np.asarray(arrays, dtype=np.float64), axis=0)


def _unit(
    model: str, dataset: str, subset: str, task_type: str, records: list[ScoreRecord]
) -> ScoredUnit:
    unit = ScoredUnit(model, dataset, subset, task_type)
    originals = [r["main_score"] for r in records if r["kind"] == "original"]
    unit.original = fmean(originals) if originals else None
    # transformation -> seed -> the records of that config (one per split)
    variants: dict[str, dict[Any, list[ScoreRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        # a query-side or corpus-side record is in the table of the four only (sides.py)
        if r["kind"] == "transform" and r["delta"] is not None and not r.get("partial"):
            name = transform_name(r)
            variants[name][r["seed"]].append(r)
            unit.axis_of[name] = present(r["axis"], "axis")
            unit.prompt_of[name] = prompt_variant(r)
    for name, seeds in variants.items():
        per_seed = {
            seed: Pair(
                fmean(r["main_score"] for r in rs), fmean(present(r["delta"], "delta") for r in rs)
            )
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
        retrieval = [p for r in flat if (p := r.get("self_retrieval")) and p.get("pairs")]
        if retrieval:
            unit.probe[name] = {k: fmean(p[k] for p in retrieval) for k in PROBE}
        ranked = [e for r in flat if (e := r.get("evalrank")) and e.get("pairs")]
        if ranked:
            unit.evalrank[name] = _evalrank_figures(ranked)
        certified = [r["faithful"] for r in flat if r.get("faithful")]
        if certified:
            unit.faithful[name] = _faithful_figures(certified, seeds)
    return unit


def _faithful_figures(
    records: list[FaithfulRecord], seeds: dict[Any, list[ScoreRecord]]
) -> FaithfulFigure:
    """The delta on certified rows, averaged as the full delta is (splits, then seeds);
    None when some config had too few certified rows to score."""
    per_seed: list[float] = []
    for rs in seeds.values():
        deltas = [f["delta"] if (f := r.get("faithful")) else None for r in rs]
        known = [d for d in deltas if d is not None]
        if len(known) < len(deltas):
            per_seed = []
            break
        per_seed.append(fmean(known))
    return {
        "criterion": records[0]["criterion"],
        "rows": sum(r["rows"] for r in records),
        "delta": fmean(per_seed) if per_seed else None,
    }


def _evalrank_figures(records: list[EvalRankRecord]) -> dict[str, float]:
    """EvalRank's cosine MRR and Hits@1/3 of a variant, and its MRR delta against the
    original on the same rows, averaged over the variant's records."""
    out: dict[str, float] = {k: fmean(r["cosine"][k] for r in records) for k in PROBE}
    paired = [
        r["original_same_rows"]["cosine"]["mrr"] for r in records if r.get("original_same_rows")
    ]
    if len(paired) == len(records):
        out["delta_mrr"] = out["mrr"] - fmean(paired)
    return out


def _mean_pair(pairs: Sequence[Pair]) -> Pair:
    return Pair(fmean(p.score for p in pairs), fmean(p.delta for p in pairs))


def dataset_units(all_units: list[ScoredUnit]) -> list[ScoredUnit]:
    """One unit per (model, dataset): its subsets averaged (a multilingual dataset counts
    once, as HTEB counts it), figure by figure over the subsets that have it; then the run
    folders of one source (results documents with the same source name and revision, say
    of two generators) averaged the same way, so that a source is one observation in the
    figures over datasets, never two."""
    # a dataset's subsets hold different items; run folders of one source, the same ones
    documents = _merge_groups(all_units, lambda u: (u.model, u.dataset), "subsets", sum)
    return _merge_groups(documents, lambda u: (u.model, u.source), "run folders", max)


def _merge_groups(
    units: list[ScoredUnit],
    key: Callable[[ScoredUnit], Any],
    what: str,
    items: Callable[[list[int]], int],
) -> list[ScoredUnit]:
    groups: dict[Any, list[ScoredUnit]] = defaultdict(list)
    for u in units:
        groups[key(u)].append(u)
    return [
        parts[0] if len(parts) == 1 else _merged(parts, f"{len(parts)} {what}", items)
        for parts in groups.values()
    ]


def _merged(parts: list[ScoredUnit], label: str, items: Callable[[list[int]], int]) -> ScoredUnit:
    """Units of one model averaged figure by figure, each over the parts that have it
    (their items combined by `items`). Parts of one dataset keep its name; run folders of
    one source take the source's."""
    first = parts[0]
    names = {u.dataset for u in parts}
    dataset = first.dataset if len(names) == 1 else first.source[0]
    merged = ScoredUnit(first.model, dataset, label, first.task_type, first.source)
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


def _merge_faithful(figures: list[FaithfulFigure], expected: int) -> FaithfulFigure:
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


def interval_method(documents: Sequence[ResultsDocument]) -> str:
    """The interval method the documents' records were made with (one for all of them)."""

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
) -> FigureRecord:
    """A mean score and delta over datasets, with the delta's 95% interval when every
    dataset has bootstrap replicates, the draws it rests on, and the datasets' items."""
    total = None if any(i is None for i in items) else sum(i for i in items if i)
    return _figure_of(_mean_pair(pairs), _mean_replicates(replicates), total, method)


def _figure_of(
    mean: Pair, joint: np.ndarray | None, items: int | None, method: str
) -> FigureRecord:
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


def aggregation(documents: Sequence[ResultsDocument]) -> str:
    """HTEB's order when every results document was scored under `--protocol hteb`."""
    names = {protocol_name(d) for d in documents}
    return TRANSFORMATIONS_FIRST if names == {"hteb"} else PER_DATASET


def _transformations_first(
    transforms: dict[str, TransformFigure], mine: list[ScoredUnit], method: str
) -> tuple[dict[str, FigureRecord], FigureRecord | None]:
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
