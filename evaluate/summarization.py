"""Summarisation as mteb's (v2) summarisation evaluator scores it.

Each row is a document with human summaries, machine summaries and a human relevance
score per machine summary. A machine summary's predicted quality is its highest
similarity to any of the row's human summaries (cosine, dot, and the model's own
similarity); per row, these are correlated with the human scores (Spearman, Pearson), and
the correlations are averaged over rows. Rows where the human scores, or the cosine or
dot predictions, are all equal are skipped, as mteb skips them. The main score is the
mean per-row cosine Spearman. A delta's bootstrap interval resamples the documents
(rows), reweighting their own correlations.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import pearsonr, spearmanr

from shiftbench.errors import InputError
from shiftbench.evaluate.resample import weighted_mean

if TYPE_CHECKING:
    from shiftbench.evaluate.tasks import Scoring


def _flatten(rows: list[dict[str, Any]], column: str) -> tuple[list[str], list[int]]:
    texts = [t for r in rows for t in r[column]]
    return texts, list(np.cumsum([len(r[column]) for r in rows])[:-1])


def evaluate(scoring: Scoring) -> dict[str, float]:
    rows = scoring.rows
    human_texts, human_cuts = _flatten(rows, "human_summaries")
    machine_texts, machine_cuts = _flatten(rows, "machine_summaries")
    human_all = np.split(scoring.embed(human_texts).astype(np.float64), human_cuts)
    machine_all = np.split(scoring.embed(machine_texts).astype(np.float64), machine_cuts)
    own = scoring.encoder.model.similarity
    corr: dict[str, list[float]] = {
        f"{s}_{c}": [] for s in ("cosine", "dot", "own") for c in ("spearman", "pearson")
    }
    # each row's own correlations (NaN for a skipped row), for a delta's bootstrap interval
    per_row: dict[str, list[float]] = {k: [] for k in corr}
    for row, human, machine in zip(rows, human_all, machine_all, strict=True):
        gold = [float(g) for g in row["relevance"]]
        if len(gold) != len(machine):
            raise InputError(
                f"{scoring.source['name']}: a row has {len(machine)} machine summaries "
                f"but {len(gold)} relevance scores"
            )
        unit_h = human / np.linalg.norm(human, axis=1, keepdims=True)
        unit_m = machine / np.linalg.norm(machine, axis=1, keepdims=True)
        cosine = (unit_m @ unit_h.T).max(axis=1)
        dot = (machine @ human.T).max(axis=1)
        mine = np.asarray(own(machine.astype(np.float32), human.astype(np.float32))).max(axis=1)
        if len(set(gold)) == 1 or len(set(dot.tolist())) == 1 or len(set(cosine.tolist())) == 1:
            for values in per_row.values():
                values.append(np.nan)
            continue
        for name, predicted in (("cosine", cosine), ("dot", dot), ("own", mine)):
            corr[f"{name}_spearman"].append(float(spearmanr(gold, predicted).statistic))
            corr[f"{name}_pearson"].append(float(pearsonr(gold, predicted).statistic))
        for key, values in corr.items():
            per_row[key].append(values[-1])
    if not corr["cosine_spearman"]:
        raise InputError(
            f"{scoring.source['name']}: every row has equal scores; nothing to correlate"
        )
    mean = {k: float(np.mean(v)) for k, v in corr.items()}
    named = {"pearson": "own_pearson", "spearman": "own_spearman"}
    key = named.get(scoring.main_score, scoring.main_score)
    if key in per_row:
        scoring.replicate = partial(weighted_mean, values=np.asarray(per_row[key]))
    return {
        "pearson": mean["own_pearson"],
        "spearman": mean["own_spearman"],
        "cosine_spearman": mean["cosine_spearman"],
        "cosine_pearson": mean["cosine_pearson"],
        "dot_spearman": mean["dot_spearman"],
        "dot_pearson": mean["dot_pearson"],
    }
