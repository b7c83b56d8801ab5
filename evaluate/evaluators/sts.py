"""STS scoring as mteb's AbsTaskSTS does it: correlations of pair similarities with gold.

Gold scores are normalised to [0, 1] with the task's score range first (as mteb does); the
correlations are the same either way, the normalisation only keeps the figures comparable.
Pair similarities are computed in float32, as mteb computes them
(evaluate/evaluators/similarity.py); under `--protocol hteb` the cosine is HTEB's (each
embedding divided by its length).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
from scipy.stats import pearsonr, spearmanr

from shiftbench.evaluate.evaluators.similarity import (
    pair_cosine,
    paired_cosine,
    paired_euclidean,
    paired_manhattan,
    paired_own,
    widened,
)
from shiftbench.evaluate.resample import Replicate, weighted_pearson, weighted_spearman

if TYPE_CHECKING:
    from shiftbench.evaluate.evaluators import Scoring


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


def pair_similarities(
    a: np.ndarray,
    b: np.ndarray,
    similarity: str = "cosine",
    model: Any = None,
    cosine: Callable[[np.ndarray, np.ndarray], np.ndarray] = paired_cosine,
) -> dict[str, np.ndarray]:
    """Each pair's cosine similarity (`cosine`: mteb's, or HTEB's), negated Manhattan and
    Euclidean distances and the model's own similarity, computed in float32 as mteb
    computes them (then widened)."""
    return {
        "cosine": widened(cosine(a, b)),
        "manhattan": widened(-paired_manhattan(a, b)),
        "euclidean": widened(-paired_euclidean(a, b)),
        "own": widened(paired_own(a, b, similarity, model)),
    }


def normalised_gold(gold: list[float], score_range: Sequence[float] | None) -> np.ndarray:
    low, high = score_range or (0.0, 5.0)
    return np.asarray([(g - low) / (high - low) for g in gold], dtype=np.float64)


def sts_metrics(
    a: np.ndarray,
    b: np.ndarray,
    gold: list[float],
    score_range: Sequence[float] | None,
    similarity: str = "cosine",
    model: Any = None,
) -> STSMetrics:
    """mteb's STS metrics for embeddings `a[i]`, `b[i]` against gold scores."""
    if len(gold) < 2:
        raise ValueError("STS needs at least two pairs to correlate")
    return metrics_of(
        pair_similarities(a, b, similarity, model), normalised_gold(gold, score_range)
    )


# metric name -> (which pair score, which correlation)
METRICS = {
    "pearson": ("own", "pearson"),
    "spearman": ("own", "spearman"),
    **{
        f"{s}_{c}": (s, c)
        for s in ("cosine", "manhattan", "euclidean")
        for c in ("pearson", "spearman")
    },
}


def metrics_of(sims: dict[str, np.ndarray], norm: np.ndarray) -> STSMetrics:
    def corr(x: np.ndarray, kind: str) -> float:
        return float((pearsonr if kind == "pearson" else spearmanr)(norm, x)[0])

    out = {name: corr(sims[key], kind) for name, (key, kind) in METRICS.items()}
    return STSMetrics(**out)  # type: ignore[typeddict-item]


def replicate_of(sims: dict[str, np.ndarray], norm: np.ndarray, main: str) -> Replicate:
    """The main score of each weighted draw of the pairs (rank each draw for Spearman)."""
    key, kind = METRICS[main]
    x = sims[key]

    def replicate(weights: np.ndarray) -> np.ndarray:
        if kind == "pearson":
            return weighted_pearson(weights, norm, x)
        return weighted_spearman(weights, norm, x)

    return replicate


def evaluate(scoring: Scoring) -> STSMetrics:
    """The STS evaluator: both text fields of every row, against its gold score."""
    source, encoder, rows = scoring.source, scoring.encoder, scoring.rows
    first, second = source["text_fields"]
    score_range = source.get("score_range")
    if len(rows) < 2:
        raise ValueError("STS needs at least two pairs to correlate")
    sims = pair_similarities(
        scoring.embed([r[first] for r in rows]),
        scoring.embed([r[second] for r in rows]),
        encoder.similarity_name,
        encoder.model,
        pair_cosine(source),
    )
    norm = normalised_gold(
        [float(r["score"]) for r in rows], tuple(score_range) if score_range else None
    )
    if scoring.main_score in METRICS:
        scoring.replicate = replicate_of(sims, norm, scoring.main_score)
    return metrics_of(sims, norm)
