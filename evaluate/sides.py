"""Scoring a variant whose corpus or train split was rewritten as well as its scored texts.

A variant's own rewritten context (a ranking corpus, a Classification train split) replaces
the original's, its usable rows only: a failed rewrite is left out, never replaced by its
original. The variant's paired original is scored with the original's context on those same
rows, so the delta compares like with like.

A ranking variant with a rewritten corpus is scored four ways, on the same queries and
documents: the original (original queries and corpus; its figure is the record's
`original_same_rows`), query-side (rewritten queries, original corpus), corpus-side
(original queries, rewritten corpus) and both-sides (both rewritten: the variant's own
record). Records say which side was rewritten in `rewritten`; the query-side and
corpus-side records are `partial`, and the report keeps them out of every figure except
the table of the four.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from statistics import fmean
from typing import Any

import numpy as np

from shiftbench.core.data.parts import CORPUS, PARTS, QUERIES, folder_split
from shiftbench.core.data.runfolder import OK, usable
from shiftbench.core.records import DataRow, ResultsDocument, ScoreRecord, present
from shiftbench.core.report_rows import SideFigure, SideRow
from shiftbench.evaluate.resample import Replicate, record_fields

Rows = list[DataRow]
Side = tuple[list[str], Rows, dict[str, Rows]]


def own_context(config: Any, context_splits: list[str], transform: str | None) -> dict[str, Rows]:
    """A variant's own rewritten context splits, usable rows only."""
    return {
        name: [r for r in config.splits[name] if usable(r.get("status", OK), transform)]
        for name in context_splits
        if name in config.splits
    }


def narrowed(context: dict[str, Rows], own: dict[str, Rows]) -> dict[str, Rows]:
    """The original's context on the rows the variant's own context kept."""
    out = dict(context)
    for name, rows in own.items():
        ids = {r["row_id"] for r in rows}
        out[name] = [r for r in context.get(name, []) if r["row_id"] in ids]
    return out


def certified_context(own: dict[str, Rows], keep: set[tuple[str, Any]]) -> dict[str, Rows]:
    """A variant's own rewritten context cut down to the rows a --faithful criterion
    certifies; `keep` holds (run-folder split, row_id) pairs, as validation names them
    (`corpus.test`, `train`)."""
    return {
        name: [r for r in rows if (folder_split(name), r["row_id"]) in keep]
        for name, rows in own.items()
    }


def rewritten_parts(own: dict[str, Rows]) -> list[str]:
    """The parts a variant's record was scored with rewritten: its queries (the scored
    texts) and each part of its own context."""
    kinds = {name.split("/")[0] for name in own}
    return [p for p in PARTS if p == QUERIES or p in kinds]


def side_records(
    record: ScoreRecord,
    sides: list[Side],
    score: Callable[..., tuple[Mapping[str, float], Replicate | None]],
    delta_of: Callable[[Replicate | None], np.ndarray | None],
    main_score: str,
    interval: str = "percentile",
) -> list[ScoreRecord]:
    """The partial records of a variant (query-side, corpus-side): each side's rows scored
    with its context, its delta against the record's paired original."""
    out: list[ScoreRecord] = []
    kept = record.copy()
    kept.pop("faithful", None)
    for rewritten, rows, context in sides:
        started = time.perf_counter()
        metrics, replicate = score(rows=rows, context=context)
        main = metrics[main_score]
        out.append(
            {
                **kept,
                "rows": len(rows),
                "scores": dict(metrics),
                "main_score": main,
                "delta": main - present(record["original_same_rows"], "original"),
                "self_retrieval": None,
                "evalrank": None,
                **record_fields(delta_of(replicate), interval, len(rows)),
                "evaluation_time": round(time.perf_counter() - started, 3),
                "rewritten": rewritten,
                "partial": True,
            }
        )
    return out


def config_label(record: ScoreRecord) -> str:
    """A record's config, with the side rewritten for a query-side or corpus-side figure."""
    if not record.get("partial"):
        return str(record["config"])
    return f"{record['config']} [{'+'.join(record['rewritten'])} rewritten]"


CELLS = {
    (QUERIES, CORPUS): "both_sides",
    (QUERIES,): "query_side",
    (CORPUS,): "corpus_side",
}


def shift_summary(
    documents: Sequence[ResultsDocument],
    labels: list[str],
    name_of: Callable[[ScoreRecord], str],
) -> list[SideRow]:
    """Per model and transformation (named by `name_of`), over the ranking datasets whose
    corpus was rewritten: the four scores (the original's on the variant's rows, query-side,
    corpus-side, both-sides) and each side's delta; within a dataset the mean over seeds,
    splits and subsets, then the mean over datasets."""
    # (model, transform) -> dataset -> cell -> [(score, delta)]
    found: dict[tuple[str, str], dict[str, dict[str, list[tuple[float, float]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for doc, label in zip(documents, labels, strict=True):
        for entry in doc["models"]:
            for r in entry["results"]:
                cell = CELLS.get(tuple(r.get("rewritten") or ()))
                if r["kind"] != "transform" or r["delta"] is None or cell is None:
                    continue
                if cell == "query_side" and not r.get("partial"):
                    continue  # a variant that rewrote its queries alone
                cells = found[(entry["model"]["id"], name_of(r))][label]
                cells[cell].append((r["main_score"], r["delta"]))
                if cell == "both_sides":
                    cells["original"].append((present(r["original_same_rows"], "original"), 0.0))
    out: list[SideRow] = []
    for (model, transform), datasets in found.items():
        original = _cell_mean(datasets, "original")
        out.append(
            {
                "model": model,
                "transform": transform,
                "datasets": len(datasets),
                "original": original["score"] if original else None,
                "both_sides": _cell_mean(datasets, "both_sides"),
                "query_side": _cell_mean(datasets, "query_side"),
                "corpus_side": _cell_mean(datasets, "corpus_side"),
            }
        )
    return out


def _cell_mean(
    datasets: Mapping[str, Mapping[str, list[tuple[float, float]]]], cell: str
) -> SideFigure | None:
    """A cell's score and delta: the mean over seeds, splits and subsets within a dataset,
    then over the datasets that have it (None: none has it)."""
    per_dataset = [
        (fmean(s for s, _ in v[cell]), fmean(d for _, d in v[cell]))
        for v in datasets.values()
        if v[cell]
    ]
    if not per_dataset:
        return None
    return {"score": fmean(s for s, _ in per_dataset), "delta": fmean(d for _, d in per_dataset)}
