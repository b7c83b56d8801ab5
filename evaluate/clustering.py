"""Clustering as mteb's legacy clustering task (AbsTaskClusteringLegacy) scores it.

A set of texts is embedded and clustered by mini-batch k-means into as many clusters as
the set has labels (batches of 500, `n_init="auto"`, seed 42), and scored by V-measure
against the labels. A row that holds lists is one set of its own, as in mteb's original
layout; rows that hold one text each form a single set. With several sets, the result is
the mean V-measure and its standard deviation, as mteb reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable

    from shiftbench.evaluate.tasks import Scoring

SEED = 42
BATCH = 500


def cluster_sets(rows: list[dict[str, Any]], field: str) -> list[tuple[list[str], list[Any]]]:
    """(texts, labels) of each set to cluster."""
    if rows and isinstance(rows[0][field], list):
        return [(list(r[field]), list(r["labels"])) for r in rows]
    return [([r[field] for r in rows], [r["labels"] for r in rows])]


def v_measure_of_set(
    embed: Callable[[list[str]], Any], texts: list[str], labels: list[Any]
) -> float:
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import v_measure_score

    if len(set(labels)) <= 1:  # one label: any clustering is perfect, as mteb counts it
        return 1.0
    model = MiniBatchKMeans(
        n_clusters=len(set(labels)), batch_size=BATCH, n_init="auto", random_state=SEED
    )
    model.fit(embed(texts))
    return float(v_measure_score(labels, model.labels_))


def evaluate(scoring: Scoring) -> dict[str, float]:
    """The Clustering evaluator: V-measure of every set, their mean and spread."""
    (field,) = scoring.source["text_fields"]
    scores = [
        v_measure_of_set(scoring.embed, texts, labels)
        for texts, labels in cluster_sets(scoring.rows, field)
    ]
    return {"v_measure": float(np.mean(scores)), "v_measure_std": float(np.std(scores))}
