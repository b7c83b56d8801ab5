"""Score encoders on a run folder (original plus variants) or on a source, and report."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from shiftbench.core.data.parts import DEFAULT
from shiftbench.core.data.runfolder import (
    OK,
    usable,
)
from shiftbench.core.models.encoders import Encoder
from shiftbench.core.progress import bar
from shiftbench.core.records import DataRow, EvalRankRecord, FaithfulRecord, ScoreRecord
from shiftbench.evaluate.collect import (
    Collection,
    ConfigView,
    require_supported,
)
from shiftbench.evaluate.evaluators import Scoring, evaluator
from shiftbench.evaluate.evaluators.clustering import seeded_by_evaluation
from shiftbench.evaluate.evaluators.evalrank import evalrank, top_quarter
from shiftbench.evaluate.evaluators.self_retrieval import self_retrieval, text_pairs
from shiftbench.evaluate.resample import (
    RESAMPLES,
    SEED,
    Replicate,
    paired_delta,
    record_fields,
)
from shiftbench.evaluate.sides import (
    Side,
    certified_context,
    narrowed,
    own_context,
    rewritten_parts,
    side_records,
)

if TYPE_CHECKING:
    from shiftbench.evaluate.faithful import CertifiedRows


Rows = list[DataRow]
Context = dict[str, Rows]  # a context split's name (corpus/test, train) -> its rows


@dataclass(frozen=True)
class _Job:
    """One encoder's scoring of a collection, as score_collection was asked for it."""

    collection: Collection
    encoder: Encoder
    faithful: CertifiedRows | None
    resamples: int
    resample_seed: int
    interval: str
    evalrank_reading: tuple[str, bool]
    originals: dict[str, ConfigView]  # subset -> its original config

    @property
    def main(self) -> str:
        return str(self.collection.source["main_score"])


@dataclass(frozen=True)
class _Place:
    """Where one config is scored: its paired original and the context splits each side
    sees."""

    base: ConfigView | None  # the subset's original (None: the subset has none)
    own: Context  # the variant's own rewritten context splits (usable rows)
    base_context: Context  # the original's context splits
    paired_context: Context  # the original's, on the variant's rows: its paired original's
    context: Context  # the variant's: the original's with its own in their place


@dataclass(frozen=True)
class _Split:
    """One config's split being scored, and what every figure of it shares."""

    config: ConfigView
    place: _Place
    name: str
    rows: Rows
    base_rows: Rows  # the original's rows of the split (the config's own for an original)
    prior: list[list[object]]
    seed: int | None

    @property
    def transform(self) -> str | None:
        return self.config.meta.get("transform")

    def kept(self) -> Rows:
        """The split's rows a variant keeps (a failed rewrite left out)."""
        return [r for r in self.rows if usable(r.get("status", OK), self.transform)]


def score_collection(
    collection: Collection,
    encoder: Encoder,
    faithful: CertifiedRows | None = None,
    *,
    resamples: int = RESAMPLES,
    resample_seed: int = SEED,
    interval: str = "percentile",
    evalrank_reading: tuple[str, bool] = ("quantile", False),
    quiet: bool = True,
) -> list[ScoreRecord]:
    """One record per (config, split): mteb's metrics, and for variants the paired delta
    with its paired-bootstrap 95% interval (`resamples` draws, 0 for none; `interval`:
    resample.interval's method; `evalrank_reading`: _evalrank's `reading`); with
    `faithful`, each transformation also on its certified rows alone. Unless `quiet`, a
    count of the configs scored shows on stderr (core/progress.py)."""
    require_supported(collection)
    originals = {c.meta["subset"]: c for c in collection.configs if c.meta["kind"] == "original"}
    job = _Job(
        collection, encoder, faithful, resamples, resample_seed, interval, evalrank_reading,
        originals,
    )  # fmt: skip
    records: list[ScoreRecord] = []
    scored = sum(c.meta["kind"] != "control" for c in collection.configs)
    # closed however the work ends, so an error starts a line of its own
    label = getattr(encoder, "name", "evaluate")  # a caller's stand-in may have none
    with bar(scored, label, unit="config", quiet=quiet) as progress:
        for config in collection.configs:
            if config.meta["kind"] == "control":
                continue  # probes, not robustness variants: `shiftbench probe` scores them
            records += _score_config(job, config)
            progress.update()
    return records


def _score_config(job: _Job, config: ConfigView) -> list[ScoreRecord]:
    """The records of one config's scored splits (with a ranking variant's side records)."""
    source = job.collection.source
    context_splits = source.get("context_splits", [])
    place = _place(job, config, context_splits)
    records: list[ScoreRecord] = []
    for split, rows in config.splits.items():
        if split in context_splits and split not in source.get("splits", []):
            # kept as it is for the evaluation of the others (Classification's train)
            continue
        records += _score_split(job, config, place, split, rows)
    return records


def _place(job: _Job, config: ConfigView, context_splits: list[str]) -> _Place:
    base = job.originals.get(config.meta["subset"])
    context = {s: base.splits[s] for s in context_splits if base and s in base.splits}
    # a variant's own rewritten corpus or train split replaces the original's; its paired
    # original keeps the original's on the same rows
    transform = config.meta.get("transform")
    own = own_context(config, context_splits, transform) if base is not config else {}
    return _Place(base, own, context, narrowed(context, own), {**context, **own})


def _evaluation_seed(job: _Job, config: ConfigView) -> tuple[int | None, list[int] | None]:
    """The seed a config is scored with and, for an original, the seeds it is scored once
    each with (HTEB's k-means seeds); (None, None) where the protocol fixes its seeds."""
    if not seeded_by_evaluation(job.collection.source):
        return None, None
    if config.meta["kind"] == "original":
        return None, evaluation_seeds(job.collection, config.meta["subset"])
    return config.meta.get("seed"), None


def _score_split(
    job: _Job, config: ConfigView, place: _Place, split: str, rows: Rows
) -> list[ScoreRecord]:
    """One config's split: its record, and a ranking variant's query-side and corpus-side
    records after it."""
    collection, encoder = job.collection, job.encoder
    started = time.perf_counter()
    prior = _prior(collection, job.originals, config.meta["subset"], split)
    seed, seeds = _evaluation_seed(job, config)
    base = place.base
    base_rows = base.splits.get(split, []) if base is not None else rows
    at = _Split(config, place, split, rows, base_rows, prior, seed)
    record, replicate = _score_rows(
        collection, encoder, config, split, rows, place.context, prior, seed, seeds
    )
    replicates = sides = None
    if config.meta["kind"] != "original" and base is not None:
        replicates, sides = _paired(job, at, record, replicate)
    record.update(record_fields(replicates, job.interval, record["rows"]))
    if "restored" in config.meta:  # HTEB's originals in failed texts' places
        record["restored"] = config.meta["restored"].get(split)
    record["evalrank"] = _evalrank(
        collection, encoder, rows, base_rows, split, at.transform, job.evalrank_reading
    )
    record["evaluation_time"] = round(time.perf_counter() - started, 3)
    if collection.rewrite != DEFAULT:
        record["rewritten"] = rewritten_parts(place.own) if base is not config else []
    if not sides:
        return [record]
    score = partial(_metrics, collection, encoder, split=split, prior=prior, seed=seed)
    return [record, *side_records(record, sides[0], score, sides[1], job.main, job.interval)]


SideDelta = Callable[[Replicate | None], "np.ndarray | None"]


def _paired(
    job: _Job, at: _Split, record: ScoreRecord, replicate: Replicate | None
) -> tuple[np.ndarray | None, tuple[list[Side], SideDelta] | None]:
    """A variant's record against its original on the same rows: the original's score and
    the delta, self-retrieval, the faithful figures, in `record`. Returns the delta's
    replicates (None without draws) and, for a variant with its own corpus, its query-side
    and corpus-side scorings with the delta of each."""
    collection, encoder, place = job.collection, job.encoder, at.place
    by_id = {r["row_id"]: r for r in at.base_rows}
    same = [by_id[r["row_id"]] for r in at.kept()]
    paired, paired_replicate = _metrics(
        collection, encoder, same, place.paired_context, at.name, at.prior, at.seed
    )
    record["original_same_rows"] = paired[job.main]
    record["delta"] = record["main_score"] - paired[job.main]
    # the draws depend on the original split and the seed alone, so every variant and
    # model of the split gets the same ones
    draws = Draws(len(at.base_rows), job.resamples, job.resample_seed, job.interval)
    position = {r["row_id"]: i for i, r in enumerate(at.base_rows)}
    replicates = None
    if job.resamples and replicate is not None and paired_replicate is not None:
        replicates = draws.delta([position[r["row_id"]] for r in same], replicate, paired_replicate)
    record["self_retrieval"] = _self_retrieval(
        collection, encoder, at.rows, by_id, at.name, at.transform
    )
    sides = None
    if f"corpus/{at.name}" in place.own:  # query-side and corpus-side, as in sides.py
        kept = at.kept()
        scorings: list[Side] = [
            (["queries"], kept, place.paired_context), (["corpus"], same, place.context)
        ]  # fmt: skip
        positions = [position[r["row_id"]] for r in same]
        sides = (scorings, partial(_side_delta, draws, positions, paired_replicate))
    if job.faithful is not None and at.config.meta["kind"] == "transform":
        record["faithful"] = _faithful_record(job, job.faithful, at, by_id, draws, position)
    return replicates, sides


def _faithful_record(
    job: _Job,
    faithful: CertifiedRows,
    at: _Split,
    by_id: dict[object, DataRow],
    draws: Draws,
    position: dict[object, int],
) -> FaithfulRecord:
    """A transformation's figures on its certified rows alone."""
    keep = faithful.rows.get(at.config.name, set())
    chosen = [r for r in at.kept() if (at.name, r["row_id"]) in keep]
    # a rewritten corpus or train split: its certified rows alone, and the paired
    # original's context on the same rows
    own, base_context = at.place.own, at.place.base_context
    trusted = certified_context(own, keep)
    contexts = ({**base_context, **trusted}, narrowed(base_context, trusted))
    figures = _faithful_figures(
        job.collection, job.encoder, chosen, by_id, contexts, at.name, at.prior,
        faithful.criterion, draws, position, at.seed,
    )  # fmt: skip
    if own:
        figures["context_rows"] = {name: len(rows) for name, rows in trusted.items()}
    return figures


def _side_delta(
    draws: Draws, positions: list[int], original: Replicate | None, variant: Replicate | None
) -> np.ndarray | None:
    if not draws.resamples or variant is None or original is None:
        return None
    return draws.delta(positions, variant, original)


def _prior(
    collection: Collection, originals: dict[str, ConfigView], subset: str, split: str
) -> list[list[object]]:
    """For Clustering's bootstrap protocol: the original labels of every (split, subset)
    mteb scores before this one (splits outer, subsets inner, in the source's order)."""
    bootstrap = (collection.source.get("protocol") or {}).get("clustering") == "bootstrap"
    if not bootstrap or seeded_by_evaluation(collection.source):  # HTEB's: no draws
        return []
    order = [
        (s, sub)
        for s in collection.source.get("splits", [])
        for sub in collection.source.get("subsets", [])
        if sub in originals and s in originals[sub].splits
    ]
    if (split, subset) not in order:
        return []
    before = order[: order.index((split, subset))]
    return [[r["labels"] for r in originals[sub].splits[s]] for s, sub in before]


@dataclass(frozen=True)
class Draws:
    """The bootstrap draws of one original split: what makes a delta's replicates."""

    items: int
    resamples: int
    seed: int
    method: str = "percentile"  # resample.interval's

    def delta(self, positions: list[int], variant: Replicate, original: Replicate) -> np.ndarray:
        return paired_delta(self.items, positions, variant, original, self.resamples, self.seed)


def _faithful_figures(
    collection: Collection,
    encoder: Encoder,
    chosen: Rows,
    by_id: dict[object, DataRow],
    contexts: tuple[Context, Context],
    split: str,
    prior: list[list[object]],
    criterion: str,
    draws: Draws,
    position: dict[object, int],
    seed: int | None = None,
) -> FaithfulRecord:
    """The variant and the original scored on the certified rows alone, the delta and its
    interval (the split's own draws, restricted to those rows). `contexts`: the variant's
    context and its paired original's."""
    main = collection.source["main_score"]
    try:
        ours, variant = _metrics(collection, encoder, chosen, contexts[0], split, prior, seed)
        same = [by_id[r["row_id"]] for r in chosen]
        theirs, original = _metrics(collection, encoder, same, contexts[1], split, prior, seed)
    except (ValueError, ZeroDivisionError) as exc:  # too few rows for the metric
        return {"criterion": criterion, "rows": len(chosen), "main_score": None,
                "original_same_rows": None, "delta": None, "ci95": None,
                "note": str(exc)}  # fmt: skip
    interval = None
    if draws.resamples and variant is not None and original is not None:
        replicates = draws.delta([position[r["row_id"]] for r in chosen], variant, original)
        interval = record_fields(replicates, draws.method, len(chosen))["ci95"]
    return {
        "criterion": criterion,
        "rows": len(chosen),
        "main_score": ours[main],
        "original_same_rows": theirs[main],
        "delta": ours[main] - theirs[main],
        "ci95": interval,
    }


def _self_retrieval(
    collection: Collection,
    encoder: Encoder,
    rows: Rows,
    by_id: dict[object, DataRow],
    split: str,
    transform: str | None,
) -> dict[str, float]:

    fields = list(collection.source["text_fields"])
    ok = [r for r in rows if usable(r.get("status", OK), transform)]
    pairs = text_pairs(ok, by_id, fields)
    background = [t for _, t in text_pairs(list(by_id.values()), by_id, fields)]
    scoring = Scoring(collection.source, encoder, ok, {}, split)
    return self_retrieval(scoring, pairs, background)


def _evalrank(
    collection: Collection,
    encoder: Encoder,
    rows: Rows,
    original_rows: Rows,
    split: str,
    transform: str | None,
    reading: tuple[str, bool] = ("quantile", False),
) -> EvalRankRecord | None:
    """EvalRank on an STS config's usable rows, the positives picked by the original's
    gold; for a variant also on the original's same rows, for a paired comparison.
    `reading`: which pairs are positives (evalrank.top_quarter) and whether the
    embeddings are centred."""

    if collection.source["task_type"] != "STS":
        return None
    fields = list(collection.source["text_fields"])
    cut, centre = reading
    positives = top_quarter(original_rows, cut)
    ok = [r for r in rows if usable(r.get("status", OK), transform)]
    scoring = Scoring(collection.source, encoder, ok, {}, split)
    record: EvalRankRecord = {
        "positives": cut,
        "centred": centre,
        **evalrank(scoring.embed, ok, fields, positives, centre),
    }
    if rows is not original_rows:
        ids = {r["row_id"] for r in ok}
        same = [r for r in original_rows if r["row_id"] in ids]
        record["original_same_rows"] = evalrank(scoring.embed, same, fields, positives, centre)
    return record


def _score_rows(
    collection: Collection,
    encoder: Encoder,
    config: ConfigView,
    split: str,
    rows: Rows,
    context: Context,
    prior: list[list[object]],
    seed: int | None = None,
    seeds: list[int] | None = None,
) -> tuple[ScoreRecord, Replicate | None]:
    """The record of one config's split. `seeds`: score once per evaluation seed and
    average every metric (HTEB's original under its clustering), each seed's main score
    kept under `per_seed`."""
    kept = [r for r in rows if usable(r.get("status", OK), config.meta.get("transform"))]
    per_seed: dict[str, float] | None = None
    metrics: Mapping[str, float]
    if seeds:
        runs = [_metrics(collection, encoder, kept, context, split, prior, s)[0] for s in seeds]
        metrics = {k: float(np.mean([run[k] for run in runs])) for k in runs[0]}
        main = collection.source["main_score"]
        per_seed = {str(s): run[main] for s, run in zip(seeds, runs, strict=True)}
        replicate = None
    else:
        metrics, replicate = _metrics(collection, encoder, kept, context, split, prior, seed)
    meta = config.meta
    record: ScoreRecord = {
        "config": config.name,
        "kind": meta["kind"],
        "subset": meta["subset"],
        "split": split,
        "transform": meta.get("transform"),
        "axis": meta.get("axis"),
        "seed": meta.get("seed"),
        "prompt_variant": meta.get("prompt_variant", 1) if meta["kind"] != "original" else None,
        "rows": len(kept),
        "rows_total": len(rows),
        "scores": dict(metrics),
        "main_score": metrics[collection.source["main_score"]],
        "original_same_rows": None,
        "delta": None,
        "self_retrieval": None,
        "evalrank": None,
    }
    if per_seed is not None:
        record["per_seed"] = per_seed
    return record, replicate


def _metrics(
    collection: Collection,
    encoder: Encoder,
    rows: Rows,
    context: Context,
    split: str,
    prior: list[list[object]] | None = None,
    seed: int | None = None,
) -> tuple[Mapping[str, float], Replicate | None]:
    """The metrics of `rows`, and the main score of any weighted draw of them."""
    score = evaluator(collection.source["task_type"])
    scoring = Scoring(collection.source, encoder, rows, context, split, prior or [], seed=seed)
    return score(scoring), scoring.replicate


def evaluation_seeds(collection: Collection, subset: str) -> list[int]:
    """The seeds an original is scored with under HTEB's clustering: its variants' seeds
    (each variant is compared with the original at its own seed), or the protocol's."""
    found = {
        int(c.meta["seed"])
        for c in collection.configs
        if c.meta["kind"] != "original"
        and c.meta["subset"] == subset
        and c.meta.get("seed") is not None
    }
    return sorted(found) or list(collection.source["protocol"]["evaluation_seeds"])
