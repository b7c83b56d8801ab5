"""Classification as mteb's AbsTaskClassification scores it.

For each of `n_experiments` rounds, `samples_per_label` training texts per label are drawn
from the original train split, a logistic regression (at most 100 iterations) is fitted on
their embeddings, and the evaluation rows are predicted; the metrics are averaged over the
rounds. The draw reproduces mteb's: a fresh `RandomState(seed)` shuffles the index order
left by the previous round, and the first texts of each label in that order are taken.
Unless the run rewrote the train split too (`--rewrite train`, the PTEB and HTEB presets),
the original and every variant are scored with the same classifiers and differ only in the
evaluation texts.

Average precision of the hard predictions (`ap`, `ap_weighted`) is reported for binary
tasks, as mteb does when the evaluation labels are two. We ask the same of the train
labels, so that a many-label task whose kept rows happen to carry two labels (a variant
that lost rows, or one bootstrap draw) gets no AP rather than an AP of an arbitrary label
pair; on a real binary task both rules agree.
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from shiftbench.errors import InputError
from shiftbench.evaluate.evaluators import train_split
from shiftbench.evaluate.resample import Replicate, per_multiset, weighted_mean

if TYPE_CHECKING:
    from shiftbench.evaluate.evaluators import Scoring

# mteb's defaults, used when the task does not set its own.
DEFAULTS = {"n_experiments": 10, "samples_per_label": 8, "seed": 42}


def draws(
    labels: list[Any], n_experiments: int, samples_per_label: int, seed: int
) -> list[list[int]]:
    """The training indices of each round, in the order they were taken."""
    order = list(range(len(labels)))
    rounds = []
    for _ in range(n_experiments):
        np.random.RandomState(seed).shuffle(order)
        taken: Counter[Any] = Counter()
        picked = []
        for i in order:
            if taken[labels[i]] < samples_per_label:
                picked.append(i)
                taken[labels[i]] += 1
        rounds.append(picked)
    return rounds


def round_metrics(
    truth: list[Any], predicted: np.ndarray, binary_task: bool = True
) -> dict[str, float]:
    """mteb's metrics of one round; `binary_task` False withholds AP whatever the rows."""
    from sklearn.exceptions import UndefinedMetricWarning

    with warnings.catch_warnings():
        # a label never predicted has no precision; sklearn counts it 0, as mteb reports
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return _round_metrics(truth, predicted, binary_task)


def _round_metrics(truth: list[Any], predicted: np.ndarray, binary_task: bool) -> dict[str, float]:
    from sklearn.metrics import (
        accuracy_score,
        average_precision_score,
        f1_score,
        precision_score,
        recall_score,
    )

    out = {
        "accuracy": accuracy_score(truth, predicted),
        "f1": f1_score(truth, predicted, average="macro"),
        "f1_weighted": f1_score(truth, predicted, average="weighted"),
        "precision": precision_score(truth, predicted, average="macro"),
        "precision_weighted": precision_score(truth, predicted, average="weighted"),
        "recall": recall_score(truth, predicted, average="macro"),
        "recall_weighted": recall_score(truth, predicted, average="weighted"),
    }
    if binary_task and len(np.unique(truth)) == 2:  # as mteb: AP of the hard predictions
        out["ap"] = average_precision_score(truth, predicted, average="macro")
        out["ap_weighted"] = average_precision_score(truth, predicted, average="weighted")
    return {k: float(v) for k, v in out.items()}


def evaluate(scoring: Scoring) -> dict[str, float]:
    """The Classification evaluator: classifiers trained on the original train split."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    source, rows = scoring.source, scoring.rows
    train = scoring.context.get(train_split(source))
    if not train:
        raise InputError(f"{source['name']}: Classification needs the original train split")
    protocol = {**DEFAULTS, **source.get("protocol", {})}
    (field,) = source["text_fields"]
    labels = [r["label"] for r in train]
    if protocol.get("classification") == "full-train":
        rounds = [list(range(len(labels)))]  # PTEB, HTEB: one classifier on the whole split
    else:
        rounds = draws(
            labels, protocol["n_experiments"], protocol["samples_per_label"], protocol["seed"]
        )
    union = sorted(set().union(*rounds))
    train_vectors = dict(zip(union, scoring.embed([train[i][field] for i in union]), strict=True))
    test = scoring.embed([r[field] for r in rows])
    truth = [r["label"] for r in rows]
    binary_task = len(set(labels)) <= 2
    per_round, predictions = [], []
    for picked in rounds:
        model = LogisticRegression(max_iter=100, random_state=protocol["seed"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(np.stack([train_vectors[i] for i in picked]), [labels[i] for i in picked])
        predictions.append(model.predict(test))
        per_round.append(round_metrics(truth, predictions[-1], binary_task))
    scoring.replicate = replicate_of(truth, predictions, scoring.main_score, binary_task)
    return {k: float(np.mean([m[k] for m in per_round])) for k in per_round[0]}


def replicate_of(
    truth: list[Any], predictions: list[np.ndarray], main: str, binary_task: bool = True
) -> Replicate:
    """The main score of each weighted draw of the test items: for accuracy, the drawn
    items' mean correctness over the rounds; any other metric recomputed per round on
    each drawn multiset from the stored predictions, then averaged over the rounds."""
    gold = np.asarray(truth)
    if main == "accuracy":
        correct = np.mean([np.asarray(p) == gold for p in predictions], axis=0)
        return lambda weights: weighted_mean(weights, correct.astype(np.float64))

    def score(idx: np.ndarray) -> float:
        rounds = [round_metrics(list(gold[idx]), p[idx], binary_task) for p in predictions]
        return float(np.mean([r.get(main, np.nan) for r in rounds]))

    return lambda weights: per_multiset(weights, score)
