"""PairClassification as mteb's AbsTaskPairClassification scores it.

Each pair gets five scores: the model's own similarity, cosine similarity, Manhattan and
Euclidean distance (lower is more similar) and the dot product. For each, the best
accuracy and the best F1 (with its precision and recall) over all thresholds, and the
average precision; `max_*` is the best of the five. The scores are computed in float32, as
mteb computes them (evaluate/evaluators/similarity.py; under `--protocol hteb` the cosine is HTEB's,
each embedding divided by its length). A threshold only ever falls between two
different scores, so tied pairs are never split and row order cannot change a figure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from shiftbench.evaluate.evaluators.similarity import (
    pair_cosine,
    paired_cosine,
    paired_dot,
    paired_euclidean,
    paired_manhattan,
    paired_own,
    widened,
)
from shiftbench.evaluate.resample import Replicate, per_multiset, weighted_average_precision

if TYPE_CHECKING:
    from shiftbench.evaluate.evaluators import Scoring

METRICS = ("accuracy", "f1", "precision", "recall", "ap")


def pair_scores(
    a: np.ndarray,
    b: np.ndarray,
    similarity: str,
    model: Any = None,
    cosine: Callable[[np.ndarray, np.ndarray], np.ndarray] = paired_cosine,
) -> dict[str, tuple[np.ndarray, bool]]:
    """Per scoring function: the pair scores (float32, as mteb computes them, widened
    exactly; the cosine mteb's or HTEB's, as `cosine` takes it) and whether higher means
    more similar."""
    return {
        "similarity": (widened(paired_own(a, b, similarity, model)), True),
        "cosine": (widened(cosine(a, b)), True),
        "manhattan": (widened(paired_manhattan(a, b)), False),
        "euclidean": (widened(paired_euclidean(a, b)), False),
        "dot": (widened(paired_dot(a, b)), True),
    }


def threshold_metrics(scores: np.ndarray, labels: np.ndarray, higher_similar: bool) -> dict:
    """Best accuracy and best F1 over thresholds between distinct scores, and AP."""
    from sklearn.metrics import average_precision_score

    n = len(labels)
    order = np.argsort(-scores if higher_similar else scores, kind="stable")
    ranked, ranked_labels = scores[order], labels[order]
    # Cut after position i (the first i+1 pairs called similar), only where the next score
    # differs, and never after the last pair.
    cuts = np.flatnonzero(ranked[:-1] != ranked[1:])
    positives_seen = np.cumsum(ranked_labels == 1)[cuts]
    negatives_seen = np.cumsum(ranked_labels == 0)[cuts]
    negatives = int(np.sum(labels == 0))
    accuracy = ((positives_seen + negatives - negatives_seen) / n).max(initial=0.0)

    f1 = precision = recall = 0.0
    total_positive = int(np.sum(labels == 1))
    useful = positives_seen > 0
    if useful.any():
        tp = positives_seen[useful].astype(np.float64)
        prec = tp / (cuts[useful] + 1)
        rec = tp / total_positive
        f1s = 2 * prec * rec / (prec + rec)
        best = int(np.argmax(f1s))
        f1, precision, recall = float(f1s[best]), float(prec[best]), float(rec[best])
    ap = average_precision_score(labels, scores if higher_similar else -scores)
    return {
        "accuracy": float(accuracy),
        "f1": f1,
        "precision": precision,
        "recall": recall,
        "ap": float(ap),
    }


def evaluate(scoring: Scoring) -> dict[str, float]:
    """The PairClassification evaluator: both text fields of every row, against its label."""
    source, encoder, rows = scoring.source, scoring.encoder, scoring.rows
    first, second = source["text_fields"]
    a = scoring.embed([r[first] for r in rows])
    b = scoring.embed([r[second] for r in rows])
    labels = np.asarray([int(r["labels"]) for r in rows], dtype=np.int64)
    out: dict[str, float] = {}
    best: dict[str, list[float]] = {m: [] for m in METRICS}
    scores = pair_scores(a, b, encoder.similarity_name, encoder.model, pair_cosine(source))
    for name, (values, higher_similar) in scores.items():
        for metric, value in threshold_metrics(values, labels, higher_similar).items():
            out[f"{name}_{metric}"] = value
            best[metric].append(value)
    out.update({f"max_{metric}": max(values) for metric, values in best.items()})
    scoring.replicate = replicate_of(scores, labels, scoring.main_score)
    return out


def replicate_of(
    scores: dict[str, tuple[np.ndarray, bool]], labels: np.ndarray, main: str
) -> Replicate:
    """The main score of each weighted draw of the pairs: average precision with weights
    (the best of the five for max_ap); other metrics recomputed on each drawn multiset."""
    name, _, metric = main.rpartition("_")
    names = list(scores) if name == "max" else [name]

    def replicate(weights: np.ndarray) -> np.ndarray:
        if metric == "ap":
            per_name = [
                weighted_average_precision(weights, values if higher else -values, labels)
                for values, higher in (scores[n] for n in names)
            ]
            return np.max(per_name, axis=0)

        def score(idx: np.ndarray) -> float:
            return max(
                threshold_metrics(values[idx], labels[idx], higher)[metric]
                for values, higher in (scores[n] for n in names)
            )

        return per_multiset(weights, score)

    return replicate
