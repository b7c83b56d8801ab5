"""Clustering with either of mteb's two protocols, as the task uses it.

Legacy (AbsTaskClusteringLegacy, and local folders): a set of texts is embedded and
clustered by mini-batch k-means into as many clusters as the set has labels (batches of
500, `n_init="auto"`, seed 42), and scored by V-measure against the labels. A row that
holds lists is one set of its own, as in mteb's original layout; rows that hold one text
each form a single set. With several sets, the result is the mean V-measure and its
standard deviation, as mteb reports.

Bootstrap (AbsTaskClustering): the rows are first down-sampled (the task's share or
number of documents, drawn without replacement), embedded, and for each label level
(hierarchical labels are lists) clustered `n_clusters` times, each time on
`max_documents_per_cluster` rows drawn with replacement (k-means++, one init, batches of
`k_mean_batch_size`, the task's seed). V-measure and adjusted mutual information are
averaged over every draw of every level. The draws come from one `random.Random(seed)`
that mteb shares across a task's subsets in order; shiftbench replays the draws of the
subsets before the one scored, so each subset gets the draws mteb gives it, and a
variant gets the same draws as its original.

Under `--protocol hteb` (the task's protocol records `clustering_scoring:
evaluation-seed`), clustering is HTEB's release's: every set is clustered once, as in the
legacy protocol and with no down-sampling whichever protocol mteb gives the task, with
k-means seeded with the evaluation seed (`Scoring.seed`) in place of 42.

For a delta's bootstrap interval (evaluate/resample.py) the clusterings stay as fitted:
a draw reweights the items (sets, or the documents of a single set) and the V-measure is
recomputed from the weighted counts, with no clustering run again.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from shiftbench.core.protocols import EVALUATION_SEED
from shiftbench.core.records import DataRow, SourceRecord
from shiftbench.evaluate.resample import (
    Replicate,
    cell_counts,
    tallied,
    v_measure_of_tables,
    weighted_mean,
    weighted_v_measure,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from shiftbench.evaluate.evaluators import Scoring

SEED = 42
BATCH = 500


def cluster_sets(rows: list[DataRow], field: str) -> list[tuple[list[str], list[Any]]]:
    """(texts, labels) of each set to cluster."""
    if sets_per_row(rows, field):
        return [(list(r[field]), list(r["labels"])) for r in rows]
    return [([r[field] for r in rows], [r["labels"] for r in rows])]


def v_measure_of_set(
    embed: Callable[[list[str]], Any], texts: list[str], labels: list[Any]
) -> float:
    return cluster_set(embed, texts, labels)[0]


def cluster_set(
    embed: Callable[[list[str]], Any], texts: list[str], labels: list[Any], seed: int = SEED
) -> tuple[float, np.ndarray | None]:
    """The V-measure of one set and the cluster each text was put in (None when the set
    has one label, which any clustering gets right, as mteb counts it), k-means seeded
    with `seed`."""
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import v_measure_score

    if len(set(labels)) <= 1:
        return 1.0, None
    model = MiniBatchKMeans(
        n_clusters=len(set(labels)), batch_size=BATCH, n_init="auto", random_state=seed
    )
    model.fit(embed(texts))
    return float(v_measure_score(labels, model.labels_)), np.asarray(model.labels_)


def _levels(labels: list[Any]) -> list[list[Any]]:
    return [label if isinstance(label, list) else [label] for label in labels]


def _draw(
    rng: random.Random, labels: list[Any], protocol: Mapping[str, Any]
) -> tuple[list[int], list[list[list[int]]], list[list[Any]]]:
    """mteb's draws for one subset: the down-sampled row indices, then per label level the
    index draws of every clustering round (into that level's rows), and the level labels."""
    n = len(labels)
    if protocol.get("max_fraction") is not None:
        keep = min(n, int(protocol["max_fraction"] * n))
        picked = rng.sample(range(n), k=keep)
    elif protocol.get("max_documents") is not None:
        picked = rng.sample(range(n), k=min(n, int(protocol["max_documents"])))
    else:
        picked = list(range(n))
    nested = _levels([labels[i] for i in picked])
    depth = max(map(len, nested))
    if protocol.get("max_depth") is not None:
        depth = min(depth, int(protocol["max_depth"]))
    rounds, level_labels = [], []
    for level in range(depth):
        present = [i for i, label in enumerate(nested) if len(label) > level]
        level_labels.append([nested[i][level] for i in present])
        rounds.append(
            [
                [present[j] for j in rng.choices(range(len(present)), k=protocol["cluster_size"])]
                for _ in range(protocol["n_clusters"])
            ]
        )
    return picked, rounds, level_labels


def bootstrap(scoring: Scoring, field: str, protocol: Mapping[str, Any]) -> dict[str, float]:
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.metrics import adjusted_mutual_info_score, v_measure_score

    rng = random.Random(protocol["seed"])
    for earlier in scoring.prior:  # the subsets mteb scores before this one
        _draw(rng, earlier, protocol)
    rows = scoring.rows
    picked, rounds, level_labels = _draw(rng, [r["labels"] for r in rows], protocol)
    vectors = np.asarray(scoring.embed([rows[i][field] for i in picked]))
    nested = _levels([rows[i]["labels"] for i in picked])
    scores: dict[str, list[float]] = {"v_measure": [], "ami": []}
    fitted: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for level, draws in enumerate(rounds):
        model = MiniBatchKMeans(
            n_clusters=len(set(level_labels[level])),
            batch_size=protocol["batch_size"],
            init="k-means++",
            n_init=1,
            random_state=protocol["seed"],
        )
        for indices in draws:
            truth = np.asarray([nested[i][level] for i in indices])
            assigned = model.fit_predict(vectors[indices])
            fitted.append((np.asarray(picked)[indices], truth, assigned))
            scores["v_measure"].append(float(v_measure_score(truth, assigned)))
            scores["ami"].append(float(adjusted_mutual_info_score(truth, assigned)))
    out: dict[str, float] = {}
    for metric, values in scores.items():
        out[metric] = float(np.mean(values))
        out[f"{metric}_std"] = float(np.std(values))
    if scoring.main_score == "v_measure":
        scoring.replicate = rounds_replicate(fitted, len(rows))
    return out


def rounds_replicate(
    fitted: list[tuple[np.ndarray, np.ndarray, np.ndarray]], rows: int
) -> Replicate:
    """Bootstrap protocol: each round's clustering stays as fitted; in a draw, each
    document of a round counts as many times as its row was drawn, and the round
    V-measures are averaged as in the full score."""
    tables = []
    for row_of, truth, assigned in fitted:
        _, t = np.unique(truth, return_inverse=True)
        _, a = np.unique(assigned, return_inverse=True)
        shape = (int(t.max()) + 1, int(a.max()) + 1)
        tables.append((cell_counts(row_of, t * shape[1] + a, rows, shape), shape))

    def replicate(weights: np.ndarray) -> np.ndarray:
        per_round = [
            v_measure_of_tables(tallied(weights, table).reshape(-1, *shape))
            for table, shape in tables
        ]
        return np.asarray(np.mean(per_round, axis=0), dtype=np.float64)

    return replicate


def evaluate(scoring: Scoring) -> dict[str, float]:
    """The Clustering evaluator: V-measure of every set, their mean and spread."""
    (field,) = scoring.source["text_fields"]
    protocol = scoring.source.get("protocol") or {}
    seed = SEED
    if seeded_by_evaluation(scoring.source):
        if scoring.seed is None:
            raise ValueError("HTEB's clustering needs an evaluation seed")
        seed = scoring.seed
    elif protocol.get("clustering") == "bootstrap":
        return bootstrap(scoring, field, protocol)
    sets = cluster_sets(scoring.rows, field)
    fitted = [cluster_set(scoring.embed, texts, labels, seed) for texts, labels in sets]
    scores = [score for score, _ in fitted]
    if scoring.main_score == "v_measure":
        scoring.replicate = legacy_replicate(sets, fitted, sets_per_row(scoring.rows, field))
    return {"v_measure": float(np.mean(scores)), "v_measure_std": float(np.std(scores))}


def seeded_by_evaluation(source: SourceRecord) -> bool:
    """Whether the task is clustered as HTEB's release does, seeded per evaluation."""
    return bool(
        source.get("task_type") == "Clustering"
        and (source.get("protocol") or {}).get("clustering_scoring") == EVALUATION_SEED
    )


def sets_per_row(rows: list[DataRow], field: str) -> bool:
    """Whether each row holds a set of its own (lists), as in mteb's original layout."""
    return bool(rows) and isinstance(rows[0][field], list)


def legacy_replicate(
    sets: list[tuple[list[str], list[Any]]],
    fitted: list[tuple[float, np.ndarray | None]],
    one_set_per_row: bool,
) -> Replicate:
    """Legacy protocol. Rows that are sets of their own are the items: a draw's score is
    the mean V-measure of its drawn sets. Rows of one text each form a single set, whose
    documents are the items: the clustering stays as fitted on the whole set, and a draw's
    score is the V-measure of its drawn documents against their fitted clusters."""
    if one_set_per_row:
        per_set = np.asarray([score for score, _ in fitted], dtype=np.float64)
        return lambda weights: weighted_mean(weights, per_set)
    ((_, labels),), ((_, assigned),) = sets, fitted
    truth = np.asarray([str(label) for label in labels])
    if assigned is None:  # one label: every draw is perfect
        return lambda weights: np.where(weights.sum(axis=1) > 0, 1.0, np.nan)
    return lambda weights: weighted_v_measure(weights, truth, assigned)
