"""PairClassification as mteb's AbsTaskPairClassification scores it.

Each pair gets five scores: the model's own similarity, cosine similarity, Manhattan and
Euclidean distance (lower is more similar) and the dot product. For each, the best
accuracy and the best F1 (with its precision and recall) over all thresholds, and the
average precision; `max_*` is the best of the five. A threshold only ever falls between two
different scores, so tied pairs are never split and row order cannot change a figure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from shiftbench.evaluate.tasks import Scoring

METRICS = ("accuracy", "f1", "precision", "recall", "ap")


def pair_scores(
    a: np.ndarray, b: np.ndarray, similarity: str
) -> dict[str, tuple[np.ndarray, bool]]:
    """Per scoring function: the pair scores and whether higher means more similar."""
    from sklearn.metrics.pairwise import (
        paired_cosine_distances,
        paired_euclidean_distances,
        paired_manhattan_distances,
    )

    cosine = 1 - paired_cosine_distances(a, b)
    euclidean = paired_euclidean_distances(a, b)
    dot = np.einsum("ij,ij->i", a, b)
    own = {"dot": dot, "euclidean": -euclidean, "manhattan": -paired_manhattan_distances(a, b)}
    return {
        "similarity": (own.get(similarity, cosine), True),
        "cosine": (cosine, True),
        "manhattan": (paired_manhattan_distances(a, b), False),
        "euclidean": (euclidean, False),
        "dot": (dot, True),
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
    for name, (scores, higher_similar) in pair_scores(a, b, encoder.similarity_name).items():
        for metric, value in threshold_metrics(np.asarray(scores), labels, higher_similar).items():
            out[f"{name}_{metric}"] = value
            best[metric].append(value)
    out.update({f"max_{metric}": max(values) for metric, values in best.items()})
    return out
