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
from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from shiftbench.core.data.parts import CORPUS, PARTS, QUERIES, folder_split
from shiftbench.core.data.runfolder import OK, usable
from shiftbench.core.records import ResultsDocument, ScoreRecord, present
from shiftbench.evaluate.resample import record_fields

Rows = list[dict[str, Any]]
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
    record: dict[str, Any],
    sides: list[Side],
    score: Callable[..., tuple[Any, Any]],
    delta_of: Callable[[Any], Any],
    main_score: str,
    interval: str = "percentile",
) -> list[dict[str, Any]]:
    """The partial records of a variant (query-side, corpus-side): each side's rows scored
    with its context, its delta against the record's paired original."""
    out = []
    kept = {k: v for k, v in record.items() if k != "faithful"}
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
                "delta": main - record["original_same_rows"],
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
) -> list[dict[str, Any]]:
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
    out = []
    for (model, transform), datasets in found.items():
        row: dict[str, Any] = {"model": model, "transform": transform, "datasets": len(datasets)}
        for cell in ("original", *CELLS.values()):
            per_dataset = [
                (fmean(s for s, _ in v[cell]), fmean(d for _, d in v[cell]))
                for v in datasets.values()
                if v[cell]
            ]
            if not per_dataset:
                row[cell] = None
                continue
            score = fmean(s for s, _ in per_dataset)
            delta = fmean(d for _, d in per_dataset)
            row[cell] = score if cell == "original" else {"score": score, "delta": delta}
        out.append(row)
    return out
