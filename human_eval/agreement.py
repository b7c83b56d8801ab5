"""Gwet's AC1 and AC2: chance-corrected agreement among several raters, ratings missing.

The input is an items x raters matrix of ratings (NaN where a rater did not rate an item)
and the full list of scale points, so that a point nobody used still counts. With
identity weights the coefficient is AC1; with ordinal, linear or quadratic weights a
near miss earns partial agreement and the coefficient is AC2 (Gwet 2014, Handbook of
Inter-Rater Reliability, chapters 3 and 4).

For items i, scale points k, l and weights w:
- r_ik raters put item i at point k, r_i = sum_k r_ik, and r*_ik = sum_l w_kl r_il;
- p_a: the mean over items with two or more ratings of
  sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1));
- pi_k = mean over items of r_ik / r_i, and p_e = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k),
  where T_w sums the weights and q counts the scale points;
- AC = (p_a - p_e) / (1 - p_e).

The variance is Gwet's linearisation over items, with a finite-population correction
(1 - n/N) when the items are a sample from N. The interval and the p-value use Student's
t with n - 1 degrees of freedom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

WEIGHTS = ("identity", "ordinal", "linear", "quadratic")


def weight_matrix(points: Sequence[float] | np.ndarray, kind: str) -> np.ndarray:
    """The q x q agreement weights for the scale `points` (in order)."""
    values = np.asarray(points, dtype=np.float64)
    q = values.size
    if kind == "identity":
        return np.eye(q)
    if kind == "ordinal":  # by rank: pairs of points between k and l, inclusive
        rank = np.arange(q)
        span = np.abs(rank[:, None] - rank[None, :]) + 1
        pairs = span * (span - 1) / 2
        return 1 - pairs / pairs.max()
    spread = values.max() - values.min()
    distance = np.abs(values[:, None] - values[None, :]) / spread
    if kind == "linear":
        return 1 - distance
    if kind == "quadratic":
        return 1 - distance**2
    raise ValueError(f"unknown weights {kind!r}; available: {', '.join(WEIGHTS)}")


@dataclass(frozen=True)
class Agreement:
    coefficient: str  # "AC1" or "AC2"
    weights: str
    value: float
    pa: float
    pe: float
    se: float
    ci95: tuple[float, float]
    p_value: float
    items: int  # items with at least one rating
    raters: int
    ratings: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def gwet(
    ratings: Any,
    points: Sequence[float],
    weights: str = "ordinal",
    *,
    population: int | None = None,
    level: float = 0.95,
) -> Agreement:
    """Gwet's AC1 (identity weights) or AC2 for an items x raters matrix (NaN = missing).

    `points` is the whole scale; a rating that is not on it is an error. `population` is
    the number of items the rated ones were drawn from (None: infinitely many).
    """
    matrix = np.asarray(ratings, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("ratings must be an items x raters matrix")
    scale = np.asarray(points, dtype=np.float64)
    q = scale.size
    if q < 2:
        raise ValueError("a scale needs at least two points")
    rated = ~np.isnan(matrix)
    off = np.unique(matrix[rated][~np.isin(matrix[rated], scale)])
    if off.size:
        raise ValueError(f"ratings {off.tolist()} are not on the scale {scale.tolist()}")
    matrix = matrix[rated.any(axis=1)]
    rated = ~np.isnan(matrix)
    n = matrix.shape[0]
    # counts[i, k]: raters who put item i at scale point k
    counts = np.stack([(matrix == p).sum(axis=1) for p in scale], axis=1).astype(np.float64)
    w = weight_matrix(scale, weights)
    per_item = counts.sum(axis=1)
    paired = per_item >= 2
    n2 = int(paired.sum())
    if n2 == 0:
        raise ValueError("no item has two or more ratings")
    weighted = counts @ w.T
    agree = (counts * (weighted - 1)).sum(axis=1)
    pairs = np.where(paired, per_item * (per_item - 1), 1.0)
    pa_item = np.where(paired, agree / pairs, 0.0)
    pa = float(pa_item[paired].mean())
    pi = (counts / per_item[:, None]).mean(axis=0)
    chance = w.sum() / (q * (q - 1))
    pe = float(chance * np.sum(pi * (1 - pi)))
    value = (pa - pe) / (1 - pe)
    # Linearised per-item contributions (Gwet 2014, section 5.3).
    ac_item = (n / n2) * (pa_item - pe * paired) / (1 - pe)
    pe_item = chance * (counts @ (1 - pi)) / per_item
    ac_item = ac_item - 2 * (1 - value) * (pe_item - pe) / (1 - pe)
    fraction = 0.0 if population is None else n / population
    variance = (
        (1 - fraction) / (n * (n - 1)) * float(np.sum((ac_item - value) ** 2)) if n > 1 else 0.0
    )
    se = math.sqrt(variance)
    if se > 0:
        t = stats.t.ppf(0.5 + level / 2, df=n - 1)
        p_value = float(2 * stats.t.sf(abs(value / se), df=n - 1))
        ci = (value - t * se, min(1.0, value + t * se))
    else:
        p_value = 0.0 if value != 0 else 1.0
        ci = (value, value)
    return Agreement(
        coefficient="AC1" if weights == "identity" else "AC2",
        weights=weights,
        value=float(value),
        pa=pa,
        pe=pe,
        se=se,
        ci95=(float(ci[0]), float(ci[1])),
        p_value=p_value,
        items=n,
        raters=matrix.shape[1],
        ratings=int(rated.sum()),
    )
