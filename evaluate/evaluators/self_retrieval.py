"""Self-retrieval: can an encoder find the original a rewrite was made from?

Each usable row of a variant gives one query per text field: the transformed text. The
candidates are all unique original texts of the same fields in the split (its own
original among them), ranked by cosine similarity. Reported: mean reciprocal rank of the
own original, and the share of queries with it at rank 1 (Hits@1) and within the top 3
(Hits@3). A candidate ranks ahead only with a strictly higher similarity, so ties favour
the original. No labels are needed, so it works on every task type.

This is not EvalRank (see evalrank.py): EvalRank ranks human-rated similar pairs among all
sentences of a dataset, while this ranks each rewrite's own source among the sources.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from shiftbench.core.records import DataRow

if TYPE_CHECKING:
    from shiftbench.evaluate.evaluators import Scoring

CHUNK = 2048


def text_pairs(
    rows: list[DataRow], originals: dict[Any, DataRow], fields: list[str]
) -> list[tuple[str, str]]:
    """(transformed, original) for every text field of every row, lists element-wise."""
    pairs: list[tuple[str, str]] = []
    for row in rows:
        base = originals[row["row_id"]]
        for field in fields:
            new, old = row[field], base[field]
            if isinstance(new, list):
                pairs.extend((str(a), str(b)) for a, b in zip(new, old, strict=False))
            else:
                pairs.append((str(new), str(old)))
    return pairs


def self_retrieval(
    scoring: Scoring, pairs: list[tuple[str, str]], background: list[str]
) -> dict[str, float]:
    """MRR and Hits@1/3 of each pair's original among `background` (unique originals)."""
    if not pairs:
        return {"pairs": 0}
    role = "query" if scoring.source["task_type"] in ("Retrieval", "Reranking") else None
    candidates = list(dict.fromkeys(background))
    position = {t: i for i, t in enumerate(candidates)}
    c = _unit(scoring.embed(candidates, role=role))
    q = _unit(scoring.embed([p[0] for p in pairs], role=role))
    own = np.asarray([position[p[1]] for p in pairs])
    ranks = np.empty(len(pairs), dtype=np.int64)
    for start in range(0, len(pairs), CHUNK):
        sims = q[start : start + CHUNK] @ c.T
        mine = sims[np.arange(sims.shape[0]), own[start : start + CHUNK]]
        ranks[start : start + CHUNK] = 1 + (sims > mine[:, None]).sum(axis=1)
    return {
        "pairs": len(pairs),
        "mrr": float(np.mean(1.0 / ranks)),
        "hits_at_1": float(np.mean(ranks <= 1)),
        "hits_at_3": float(np.mean(ranks <= 3)),
    }


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = vectors.astype(np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)
