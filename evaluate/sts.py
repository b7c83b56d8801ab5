"""STS scoring as mteb's AbsTaskSTS does it: correlations of pair similarities with gold.

Gold scores are normalised to [0, 1] with the task's score range first (as mteb does); the
correlations are the same either way, the normalisation only keeps the figures comparable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

import numpy as np
from scipy.stats import pearsonr, spearmanr

if TYPE_CHECKING:
    from shiftbench.evaluate.tasks import Scoring


class STSMetrics(TypedDict):
    """The metric names and meanings of mteb's STS results."""

    pearson: float
    spearman: float
    cosine_pearson: float
    cosine_spearman: float
    manhattan_pearson: float
    manhattan_spearman: float
    euclidean_pearson: float
    euclidean_spearman: float


def pair_similarities(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Row-wise cosine similarity and negated Manhattan and Euclidean distances."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    norms = np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1)
    cosine = np.sum(a64 * b64, axis=1) / np.where(norms == 0, 1.0, norms)
    diff = a64 - b64
    return {
        "cosine": cosine,
        "manhattan": -np.abs(diff).sum(axis=1),
        "euclidean": -np.sqrt((diff * diff).sum(axis=1)),
        "dot": np.sum(a64 * b64, axis=1),
    }


def sts_metrics(
    a: np.ndarray,
    b: np.ndarray,
    gold: list[float],
    score_range: tuple[float, float] | None,
    similarity: str = "cosine",
) -> STSMetrics:
    """mteb's STS metrics for embeddings `a[i]`, `b[i]` against gold scores."""
    if len(gold) < 2:
        raise ValueError("STS needs at least two pairs to correlate")
    low, high = score_range or (0.0, 5.0)
    norm = [(g - low) / (high - low) for g in gold]
    sims = pair_similarities(a, b)

    def corr(x: np.ndarray) -> tuple[float, float]:
        return float(pearsonr(norm, x)[0]), float(spearmanr(norm, x)[0])

    cos_p, cos_s = corr(sims["cosine"])
    man_p, man_s = corr(sims["manhattan"])
    euc_p, euc_s = corr(sims["euclidean"])
    own_p, own_s = corr(sims[similarity]) if similarity in sims else (cos_p, cos_s)
    return STSMetrics(
        pearson=own_p,
        spearman=own_s,
        cosine_pearson=cos_p,
        cosine_spearman=cos_s,
        manhattan_pearson=man_p,
        manhattan_spearman=man_s,
        euclidean_pearson=euc_p,
        euclidean_spearman=euc_s,
    )


def evaluate(scoring: Scoring) -> STSMetrics:
    """The STS evaluator: both text fields of every row, against its gold score."""
    source, encoder, rows = scoring.source, scoring.encoder, scoring.rows
    first, second = source["text_fields"]
    score_range = source.get("score_range")
    return sts_metrics(
        scoring.embed([r[first] for r in rows]),
        scoring.embed([r[second] for r in rows]),
        [float(r["score"]) for r in rows],
        tuple(score_range) if score_range else None,
        encoder.similarity_name,
    )
