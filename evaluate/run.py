"""Score encoders on a run folder (original plus variants) or on a source, and report."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from shiftbench.core.data.parts import DEFAULT
from shiftbench.core.data.runfolder import (
    OK,
    usable,
)
from shiftbench.core.models.encoders import Encoder
from shiftbench.core.progress import bar
from shiftbench.core.records import ScoreRecord
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
    certified_context,
    narrowed,
    own_context,
    rewritten_parts,
    side_records,
)

if TYPE_CHECKING:
    from shiftbench.evaluate.faithful import CertifiedRows


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
    context_splits = collection.source.get("context_splits", [])
    records = []
    scored = sum(c.meta["kind"] != "control" for c in collection.configs)
    # closed however the work ends, so an error starts a line of its own
    label = getattr(encoder, "name", "evaluate")  # a caller's stand-in may have none
    with bar(scored, label, unit="config", quiet=quiet) as progress:
        for config in collection.configs:
            if config.meta["kind"] == "control":
                continue  # probes, not robustness variants: `shiftbench probe` scores them
            base = originals.get(config.meta["subset"])
            transform = config.meta.get("transform")
            context = {s: base.splits[s] for s in context_splits if base and s in base.splits}
            # a variant's own rewritten corpus or train split replaces the original's; its
            # paired original keeps the original's on the same rows
            own = own_context(config, context_splits, transform) if base is not config else {}
            base_context = context
            paired_context, context = narrowed(context, own), {**context, **own}
            for split, rows in config.splits.items():
                if split in context_splits and split not in collection.source.get("splits", []):
                    # kept as it is for the evaluation of the others (Classification's train)
                    continue
                started = time.perf_counter()
                prior = _prior(collection, originals, config.meta["subset"], split)
                seed = seeds = None
                if seeded_by_evaluation(collection.source):  # HTEB's k-means seeds
                    if config.meta["kind"] == "original":
                        seeds = evaluation_seeds(collection, config.meta["subset"])
                    else:
                        seed = config.meta.get("seed")
                record, replicate = _score_rows(
                    collection, encoder, config, split, rows, context, prior, seed, seeds
                )
                replicates = sides = None
                base_rows = base.splits.get(split, []) if base is not None else rows
                if config.meta["kind"] != "original" and base is not None:
                    by_id = {r["row_id"]: r for r in base_rows}
                    same = [
                        by_id[r["row_id"]] for r in rows if usable(r.get("status", OK), transform)
                    ]
                    paired, paired_replicate = _metrics(
                        collection, encoder, same, paired_context, split, prior, seed
                    )
                    main = collection.source["main_score"]
                    record["original_same_rows"] = paired[main]
                    record["delta"] = record["main_score"] - paired[main]
                    # the draws depend on the original split and the seed alone, so every
                    # variant and model of the split gets the same ones
                    draws = Draws(len(base_rows), resamples, resample_seed, interval)
                    position = {r["row_id"]: i for i, r in enumerate(base_rows)}
                    if resamples and replicate is not None and paired_replicate is not None:
                        replicates = draws.delta(
                            [position[r["row_id"]] for r in same], replicate, paired_replicate
                        )
                    record["self_retrieval"] = _self_retrieval(
                        collection, encoder, rows, by_id, split, transform
                    )
                    if f"corpus/{split}" in own:  # query-side and corpus-side, as in sides.py
                        kept = [r for r in rows if usable(r.get("status", OK), transform)]
                        sides = [(["queries"], kept, paired_context), (["corpus"], same, context)]
                        positions = [position[r["row_id"]] for r in same]
                        delta_of = partial(_side_delta, draws, positions, paired_replicate)
                    if faithful is not None and config.meta["kind"] == "transform":
                        keep = faithful.rows.get(config.name, set())
                        chosen = [
                            r for r in rows
                            if usable(r.get("status", OK), transform)
                            and (split, r["row_id"]) in keep
                        ]  # fmt: skip
                        # a rewritten corpus or train split: its certified rows alone, and the
                        # paired original's context on the same rows
                        trusted = certified_context(own, keep)
                        contexts = ({**base_context, **trusted}, narrowed(base_context, trusted))
                        record["faithful"] = _faithful_figures(
                            collection, encoder, chosen, by_id, contexts, split, prior,
                            faithful.criterion, draws, position, seed,
                        )  # fmt: skip
                        if own:
                            record["faithful"]["context_rows"] = {
                                name: len(rows) for name, rows in trusted.items()
                            }
                record.update(record_fields(replicates, interval, record["rows"]))
                if "restored" in config.meta:  # HTEB's originals in failed texts' places
                    record["restored"] = config.meta["restored"].get(split)
                record["evalrank"] = _evalrank(
                    collection, encoder, rows, base_rows, split, transform, evalrank_reading
                )
                record["evaluation_time"] = round(time.perf_counter() - started, 3)
                if collection.rewrite != DEFAULT:
                    record["rewritten"] = rewritten_parts(own) if base is not config else []
                records.append(record)
                if sides:
                    score = partial(
                        _metrics, collection, encoder, split=split, prior=prior, seed=seed
                    )
                    main = collection.source["main_score"]
                    records += side_records(record, sides, score, delta_of, main, interval)
            progress.update()
    return cast("list[ScoreRecord]", records)  # built key by key above; typed as they leave


def _side_delta(
    draws: Draws, positions: list[int], original: Replicate | None, variant: Replicate | None
) -> Any:
    if not draws.resamples or variant is None or original is None:
        return None
    return draws.delta(positions, variant, original)


def _prior(
    collection: Collection, originals: dict[str, ConfigView], subset: str, split: str
) -> list[list[Any]]:
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

    def delta(self, positions: list[int], variant: Replicate, original: Replicate) -> Any:
        return paired_delta(self.items, positions, variant, original, self.resamples, self.seed)


def _faithful_figures(
    collection: Collection,
    encoder: Encoder,
    chosen: list[dict[str, Any]],
    by_id: dict[Any, dict[str, Any]],
    contexts: tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]],
    split: str,
    prior: list[list[Any]],
    criterion: str,
    draws: Draws,
    position: dict[Any, int],
    seed: int | None = None,
) -> dict[str, Any]:
    """The variant and the original scored on the certified rows alone, the delta and its
    interval (the split's own draws, restricted to those rows). `contexts`: the variant's
    context and its paired original's."""
    out: dict[str, Any] = {"criterion": criterion, "rows": len(chosen)}
    main = collection.source["main_score"]
    try:
        ours, variant = _metrics(collection, encoder, chosen, contexts[0], split, prior, seed)
        same = [by_id[r["row_id"]] for r in chosen]
        theirs, original = _metrics(collection, encoder, same, contexts[1], split, prior, seed)
    except (ValueError, ZeroDivisionError) as exc:  # too few rows for the metric
        return {**out, "main_score": None, "original_same_rows": None, "delta": None,
                "ci95": None, "note": str(exc)}  # fmt: skip
    interval = None
    if draws.resamples and variant is not None and original is not None:
        replicates = draws.delta([position[r["row_id"]] for r in chosen], variant, original)
        interval = record_fields(replicates, draws.method, len(chosen))["ci95"]
    return {
        **out,
        "main_score": ours[main],
        "original_same_rows": theirs[main],
        "delta": ours[main] - theirs[main],
        "ci95": interval,
    }


def _self_retrieval(
    collection: Collection,
    encoder: Encoder,
    rows: list[dict[str, Any]],
    by_id: dict[Any, dict[str, Any]],
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
    rows: list[dict[str, Any]],
    original_rows: list[dict[str, Any]],
    split: str,
    transform: str | None,
    reading: tuple[str, bool] = ("quantile", False),
) -> dict[str, Any] | None:
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
    figures = evalrank(scoring.embed, ok, fields, positives, centre)
    if rows is not original_rows:
        ids = {r["row_id"] for r in ok}
        same = [r for r in original_rows if r["row_id"] in ids]
        figures["original_same_rows"] = evalrank(scoring.embed, same, fields, positives, centre)
    return {"positives": cut, "centred": centre, **figures}


def _score_rows(
    collection: Collection,
    encoder: Encoder,
    config: ConfigView,
    split: str,
    rows: list[dict[str, Any]],
    context: dict[str, list[dict[str, Any]]],
    prior: list[list[Any]],
    seed: int | None = None,
    seeds: list[int] | None = None,
) -> tuple[dict[str, Any], Replicate | None]:
    """The record of one config's split. `seeds`: score once per evaluation seed and
    average every metric (HTEB's original under its clustering), each seed's main score
    kept under `per_seed`."""
    kept = [r for r in rows if usable(r.get("status", OK), config.meta.get("transform"))]
    per_seed: dict[str, float] | None = None
    if seeds:
        runs = [_metrics(collection, encoder, kept, context, split, prior, s)[0] for s in seeds]
        metrics = {k: float(np.mean([run[k] for run in runs])) for k in runs[0]}
        main = collection.source["main_score"]
        per_seed = {str(s): run[main] for s, run in zip(seeds, runs, strict=True)}
        replicate = None
    else:
        metrics, replicate = _metrics(collection, encoder, kept, context, split, prior, seed)
    meta = config.meta
    extra = {"per_seed": per_seed} if per_seed is not None else {}
    return {
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
        **extra,
    }, replicate


def _metrics(
    collection: Collection,
    encoder: Encoder,
    rows: list[dict[str, Any]],
    context: dict[str, list[dict[str, Any]]],
    split: str,
    prior: list[list[Any]] | None = None,
    seed: int | None = None,
) -> tuple[Any, Replicate | None]:
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
