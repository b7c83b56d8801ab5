"""Summarisation as mteb's (v2) summarisation evaluator scores it.

Each row is a document with human summaries, machine summaries and a human relevance
score per machine summary. A machine summary's predicted quality is its highest
similarity to any of the row's human summaries (cosine, dot, and the model's own
similarity); per row, these are correlated with the human scores (Spearman, Pearson), and
the correlations are averaged over rows. Rows where the human scores, or the cosine or
dot predictions, are all equal are skipped, as mteb skips them. The main score is the
mean per-row cosine Spearman. A delta's bootstrap interval resamples the documents
(rows), reweighting their own correlations.

HTEB's release correlates instead once over every machine summary of every document (its
best cosine to the document's human summaries against its human score), skipping no
document: `pooled_cosine_spearman`, the main score under `--protocol hteb` (computed only
there). Its interval resamples documents too, each drawn document bringing all its machine
summaries into the pooled correlation.

As in mteb, the human scores are first scaled to [0, 1] with the task's score range, and
each machine summary is scored on its own against the row's human summaries in torch
float32 (the model's own similarity one pair at a time), the best of each taken as a
Python float: computed in float64 instead, near-equal predictions part or merge, which
moves a Spearman correlation and can change which rows count as constant.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

import numpy as np
from scipy.stats import pearsonr, spearmanr

from shiftbench.core.messages import counted
from shiftbench.core.records import DataRow
from shiftbench.errors import InputError
from shiftbench.evaluate.evaluators.sts import normalised_gold
from shiftbench.evaluate.resample import weighted_mean, weighted_spearman

if TYPE_CHECKING:
    from shiftbench.evaluate.evaluators import Scoring

# mteb tasks that still score with mteb's first summarisation metric (it averaged each
# correlation together with its p-value), and the task with the same data that does not.
SUPERSEDED = {"SummEval": "SummEvalSummarization.v2", "SummEvalFr": "SummEvalFrSummarization.v2"}
PREDICTIONS = ("cosine", "dot", "own")


POOLED = "pooled_cosine_spearman"


class SummarizationMetrics(TypedDict):
    """The metric names and meanings of mteb's summarisation results (and HTEB's pooled
    correlation, under its protocol)."""

    pearson: float
    spearman: float
    cosine_spearman: float
    cosine_pearson: float
    dot_spearman: float
    dot_pearson: float
    pooled_cosine_spearman: NotRequired[float]


def _flatten(rows: list[DataRow], column: str) -> tuple[list[str], list[int]]:
    texts = [t for r in rows for t in r[column]]
    return texts, [int(c) for c in np.cumsum([len(r[column]) for r in rows])[:-1]]


def predictions(machine: np.ndarray, human: np.ndarray, model: Any) -> dict[str, list[float]]:
    """Each machine summary's best cosine, dot and own similarity to a human summary."""
    import torch

    h = torch.from_numpy(np.asarray(human, dtype=np.float32))
    h_unit = torch.nn.functional.normalize(h, p=2, dim=1)
    out: dict[str, list[float]] = {name: [] for name in PREDICTIONS}
    for vector in np.asarray(machine, dtype=np.float32):
        m = torch.from_numpy(vector).reshape(1, -1)
        m_unit = torch.nn.functional.normalize(m, p=2, dim=1)
        out["cosine"].append(torch.max(m_unit @ h_unit.T).item())
        out["dot"].append(torch.max(m @ h.T).item())
        own = [float(model.similarity(vector, other)) for other in np.asarray(human, np.float32)]
        out["own"].append(max(own))
    return out


def row_correlations(gold: list[float], predicted: dict[str, list[float]]) -> dict[str, float]:
    """One row's Spearman and Pearson correlations; empty when mteb skips the row."""
    if len(set(gold)) == 1 or any(len(set(predicted[k])) == 1 for k in ("dot", "cosine")):
        return {}
    out = {}
    for name in PREDICTIONS:
        out[f"{name}_spearman"] = float(spearmanr(gold, predicted[name]).statistic)
        out[f"{name}_pearson"] = float(pearsonr(gold, predicted[name]).statistic)
    return out


def evaluate(scoring: Scoring) -> SummarizationMetrics:
    """The Summarization evaluator: each row's machine summaries against its human ones."""
    rows, name = scoring.rows, scoring.source["name"]
    score_range = scoring.source.get("score_range")
    human_texts, human_cuts = _flatten(rows, "human_summaries")
    machine_texts, machine_cuts = _flatten(rows, "machine_summaries")
    human_all = np.split(scoring.embed(human_texts), human_cuts)
    machine_all = np.split(scoring.embed(machine_texts), machine_cuts)
    keys = [f"{s}_{c}" for s in PREDICTIONS for c in ("spearman", "pearson")]
    kept: list[dict[str, float]] = []
    pooled_gold: list[float] = []  # every machine summary's human score and best cosine
    pooled_cosine: list[float] = []
    # each row's correlations, NaN for a skipped row (for a delta's bootstrap interval)
    per_row: dict[str, list[float]] = {k: [] for k in keys}
    for row, human, machine in zip(rows, human_all, machine_all, strict=True):
        if len(row["relevance"]) != len(machine):
            raise InputError(
                f"{name}: a row has "
                f"{counted(len(machine), 'machine summary', 'machine summaries')} but "
                f"{counted(len(row['relevance']), 'relevance score')}"
            )
        gold = normalised_gold([float(g) for g in row["relevance"]], score_range)
        predicted = predictions(machine, human, scoring.encoder.model)
        found = row_correlations(gold.tolist(), predicted)
        pooled_gold += gold.tolist()
        pooled_cosine += predicted["cosine"]
        kept += [found] if found else []
        for key in keys:
            per_row[key].append(found.get(key, np.nan))
    if scoring.main_score == POOLED:
        return _pooled(scoring, rows, np.asarray(pooled_gold), np.asarray(pooled_cosine), kept)
    if not kept:
        raise ValueError(f"{name}: every row has equal scores; nothing to correlate")
    mean = {k: float(np.mean([found[k] for found in kept])) for k in keys}
    named = {"pearson": "own_pearson", "spearman": "own_spearman"}
    key = named.get(scoring.main_score, scoring.main_score)
    if key in per_row:
        scoring.replicate = partial(weighted_mean, values=np.asarray(per_row[key]))
    return _metrics(mean)


def _metrics(mean: dict[str, float]) -> SummarizationMetrics:
    return SummarizationMetrics(
        pearson=mean["own_pearson"],
        spearman=mean["own_spearman"],
        cosine_spearman=mean["cosine_spearman"],
        cosine_pearson=mean["cosine_pearson"],
        dot_spearman=mean["dot_spearman"],
        dot_pearson=mean["dot_pearson"],
    )


def _pooled(
    scoring: Scoring,
    rows: list[DataRow],
    gold: np.ndarray,
    cosine: np.ndarray,
    kept: list[dict[str, float]],
) -> SummarizationMetrics:
    """HTEB's figure: one Spearman over every machine summary of every document, beside
    mteb's means over the documents it keeps (NaN when it keeps none)."""
    counts = np.asarray([len(r["machine_summaries"]) for r in rows])
    keys = [f"{s}_{c}" for s in PREDICTIONS for c in ("spearman", "pearson")]
    mean = {k: float(np.mean([f[k] for f in kept])) if kept else float("nan") for k in keys}

    def replicate(weights: np.ndarray) -> np.ndarray:
        return weighted_spearman(np.repeat(weights, counts, axis=1), gold, cosine)

    scoring.replicate = replicate
    out = _metrics(mean)
    out["pooled_cosine_spearman"] = float(spearmanr(gold, cosine).statistic)
    return out
