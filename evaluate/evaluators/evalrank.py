"""EvalRank (Wang et al., 2022, "Just Rank"): sentence embeddings judged by how highly
they rank a human-rated similar sentence among every sentence of the dataset.

Positives are the STS pairs whose gold score is in the top quarter of the split's pairs,
each pair in both directions. The paper says "the pairs with top 25% similarity score";
two readings of it:

- "quantile" (the default): every pair at or above the 75th percentile of the split's
  scores, ties at the cut kept (STSBenchmark test: 393 of 1379 pairs, 28.5%, as gold
  scores repeat);
- "exact": the ceil(n / 4) pairs of highest score, ties at the cut broken by row order
  (STSBenchmark test: 345 pairs).

The background is every distinct sentence of the split. The authors' released code also
centres the embeddings (subtracts the background sentences' mean vector) before ranking,
which the paper does not mention: `centre=True` does that. For a positive (x, y), every
background sentence other than x is ranked by its similarity to x; the positive's rank is
one plus the number of sentences strictly more similar to x than y is. Reported: the mean
reciprocal rank and Hits@1/3, with the cosine and with EvalRank's l2 similarity
1 / (1 + |e_x - e_y|) (a ranking by the Euclidean distance).

On a variant, the positives are the rows the original's gold picks, with the variant's
texts, and the background is the variant's sentences: the rewrite changes both the pairs
and what they compete against, as a new dataset would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from shiftbench.core.records import DataRow, EvalRankFigures, RankFigures

TOP_QUANTILE = 0.75
CHUNK = 1024
POSITIVES = ("quantile", "exact")  # the readings of "top 25%" (module docstring)


def top_quarter(rows: Sequence[DataRow], reading: str = "quantile") -> set[Any]:
    """The row ids of the positive pairs: at or above the 75th percentile of the gold
    scores ("quantile"), or the ceil(n / 4) highest, earlier rows first among equal
    scores ("exact")."""
    if not rows:
        return set()
    scores = np.asarray([float(r["score"]) for r in rows])
    if reading == "exact":
        order = np.argsort(-scores, kind="stable")[: -(-len(rows) // 4)]
        return {rows[i]["row_id"] for i in order}
    threshold = float(np.quantile(scores, TOP_QUANTILE))
    return {r["row_id"] for r, s in zip(rows, scores, strict=True) if s >= threshold}


def evalrank(
    embed: Callable[[list[str]], Any],
    rows: Sequence[DataRow],
    fields: Sequence[str],
    positives: set[Any],
    centre: bool = False,
) -> EvalRankFigures:
    """EvalRank's MRR and Hits@1/3 (cosine and l2) of the positive rows among `rows`;
    with `centre`, on embeddings less the background sentences' mean vector."""
    first, second = fields
    background = list(dict.fromkeys(str(r[f]) for r in rows for f in (first, second)))
    index = {t: i for i, t in enumerate(background)}
    queries: list[tuple[int, int]] = []
    for r in rows:
        if r["row_id"] not in positives:
            continue
        a, b = index[str(r[first])], index[str(r[second])]
        if a != b:  # a pair of one sentence twice has no partner to find
            queries += [(a, b), (b, a)]
    if not queries:
        return {"pairs": 0}
    vectors = np.asarray(embed(background), dtype=np.float64)
    if centre:
        vectors = vectors - vectors.mean(axis=0)
    out: EvalRankFigures = {"pairs": len(queries), "background": len(background)}
    out["cosine"] = _rank_figures(vectors, queries, _cosine)
    out["l2"] = _rank_figures(vectors, queries, _negative_distance)
    return out


def _rank_figures(
    vectors: np.ndarray,
    queries: list[tuple[int, int]],
    similarity: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> RankFigures:
    ranks = _ranks(vectors, queries, similarity)
    return {
        "mrr": float(np.mean(1.0 / ranks)),
        "hits_at_1": float(np.mean(ranks <= 1)),
        "hits_at_3": float(np.mean(ranks <= 3)),
    }


def _ranks(
    vectors: np.ndarray,
    queries: list[tuple[int, int]],
    similarity: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    anchor = np.asarray([q[0] for q in queries])
    partner = np.asarray([q[1] for q in queries])
    ranks = np.empty(len(queries), dtype=np.int64)
    for start in range(0, len(queries), CHUNK):
        stop = start + CHUNK
        rows = np.arange(anchor[start:stop].size)
        sims = similarity(vectors[anchor[start:stop]], vectors)
        own = sims[rows, partner[start:stop]]
        sims[rows, anchor[start:stop]] = -np.inf  # the anchor is not its own candidate
        ranks[start:stop] = 1 + (sims > own[:, None]).sum(axis=1)
    return ranks


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    def unit(v: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(norms == 0, 1.0, norms)

    return unit(a) @ unit(b).T


def _negative_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # 1 / (1 + d) orders candidates as -d does. cdist takes each difference directly
    # rather than expanding |a|² + |b|² - 2ab, which loses near-ties to rounding.
    from scipy.spatial.distance import cdist

    return -cdist(a, b)
