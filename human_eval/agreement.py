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

    def as_dict(self) -> dict[str, object]:
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
    matrix, scale = _on_scale(ratings, points)
    q = scale.size
    matrix = matrix[(~np.isnan(matrix)).any(axis=1)]
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
    se, p_value, ci = _inference(ac_item, value, n, population, level)
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


def _on_scale(ratings: Any, points: Sequence[float]) -> tuple[Any, Any]:
    """The ratings as an items x raters matrix and the scale as an array, refused when
    the matrix is not two-dimensional, the scale has fewer than two points or a rating is
    off it."""
    matrix = np.asarray(ratings, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("ratings must be an items x raters matrix")
    scale = np.asarray(points, dtype=np.float64)
    if scale.size < 2:
        raise ValueError("a scale needs at least two points")
    rated = ~np.isnan(matrix)
    off = np.unique(matrix[rated][~np.isin(matrix[rated], scale)])
    if off.size:
        raise ValueError(f"ratings {off.tolist()} are not on the scale {scale.tolist()}")
    return matrix, scale


def _inference(
    ac_item: Any, value: float, n: int, population: int | None, level: float
) -> tuple[float, float, tuple[float, float]]:
    """The coefficient's standard error, p-value and `level` interval from its per-item
    contributions (t with n - 1 degrees of freedom, finite-population corrected)."""
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
    return se, p_value, ci


# -- Krippendorff's alpha ----------------------------------------------------------------

LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class Alpha:
    """Krippendorff's alpha of an items x raters matrix, with a bootstrap interval.

    Attributes:
        level: The metric: "nominal", "ordinal" or "interval".
        value: alpha = 1 - D_o / D_e.
        observed: D_o, the mean squared difference between values paired within items.
        expected: D_e, the same over all pairs of values, items ignored.
        ci95: The 2.5th and 97.5th percentiles of alpha over item resamples (None without
            resamples).
        resamples: Bootstrap draws; resamples in which every value is equal (alpha
            undefined) are left out, and `resamples_used` says how many remained.
        resamples_used: Draws that gave a value.
        seed: Seed of the draws.
        items: Items with two or more ratings (the pairable ones alpha uses).
        raters: Columns of the matrix.
        ratings: Ratings on the pairable items.
    """

    level: str
    value: float
    observed: float
    expected: float
    ci95: tuple[float, float] | None
    resamples: int
    resamples_used: int
    seed: int
    items: int
    raters: int
    ratings: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _unit_coincidences(matrix: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Per pairable item u, its q x q coincidences (n_uc n_uk - [c=k] n_uc) / (m_u - 1)."""
    counts = np.stack([(matrix == p).sum(axis=1) for p in scale], axis=1).astype(np.float64)
    per_item = counts.sum(axis=1)
    outer = counts[:, :, None] * counts[:, None, :]
    same = counts[:, :, None] * np.eye(scale.size)[None, :, :]
    return (outer - same) / (per_item - 1)[:, None, None]


def _squared_distances(level: str, scale: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """delta^2 between scale points, one q x q matrix per row of `totals` (the values'
    frequencies n_c, which the ordinal metric depends on)."""
    q = scale.size
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(q), (totals.shape[0], q, q))
    if level == "interval":
        diff = scale[:, None] - scale[None, :]
        return np.broadcast_to(diff**2, (totals.shape[0], q, q))
    if level == "ordinal":  # (sum of n_g for g from c to k, minus half of n_c and of n_k)^2
        middle = np.cumsum(totals, axis=1) - totals / 2
        return (middle[:, :, None] - middle[:, None, :]) ** 2
    raise ValueError(f"unknown level {level!r}; available: {', '.join(LEVELS)}")


def _alphas(
    coincidences: np.ndarray, level: str, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """alpha, D_o and D_e for each q x q coincidence matrix in `coincidences` (B x q x q);
    alpha is NaN where D_e is 0 (every value the same)."""
    totals = coincidences.sum(axis=2)  # n_c
    n = totals.sum(axis=1)
    delta = _squared_distances(level, scale, totals)
    observed = (coincidences * delta).sum(axis=(1, 2)) / n
    expected = (totals[:, :, None] * totals[:, None, :] * delta).sum(axis=(1, 2)) / (n * (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(expected > 0, 1 - observed / np.where(expected > 0, expected, 1), np.nan)
    return alpha, observed, expected


def krippendorff_alpha(
    ratings: Any,
    points: Sequence[float],
    level: str = "ordinal",
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> Alpha:
    """Krippendorff's alpha for an items x raters matrix (NaN = missing), on the scale
    `points`, with the percentile interval of `resamples` item bootstraps.

    The point estimate is Krippendorff's (coincidence matrix over pairable items; the
    ordinal metric from the values' frequencies). The interval resamples whole items with
    replacement and recomputes alpha, the ordinal metric included; it is not Hayes and
    Krippendorff's (2007) bootstrap, which resamples pairs of values.
    """
    matrix = np.asarray(ratings, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("ratings must be an items x raters matrix")
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; available: {', '.join(LEVELS)}")
    scale = np.asarray(sorted(points), dtype=np.float64)
    rated = ~np.isnan(matrix)
    off = np.unique(matrix[rated][~np.isin(matrix[rated], scale)])
    if off.size:
        raise ValueError(f"ratings {off.tolist()} are not on the scale {scale.tolist()}")
    pairable = matrix[rated.sum(axis=1) >= 2]
    if pairable.shape[0] == 0:
        raise ValueError("no item has two or more ratings")
    units = _unit_coincidences(pairable, scale)
    alpha, observed, expected = _alphas(units.sum(axis=0)[None], level, scale)
    if np.isnan(alpha[0]):
        raise ValueError("every rating is the same value: alpha is undefined")
    ci: tuple[float, float] | None = None
    used = 0
    if resamples > 0:
        rng = np.random.default_rng(seed)
        m = units.shape[0]
        draws = rng.multinomial(m, np.full(m, 1.0 / m), size=resamples).astype(np.float64)
        q = scale.size
        boot = (draws @ units.reshape(m, q * q)).reshape(resamples, q, q)
        values = _alphas(boot, level, scale)[0]
        values = values[~np.isnan(values)]
        used = int(values.size)
        if used:
            low, high = np.percentile(values, [2.5, 97.5])
            ci = (float(low), float(high))
    return Alpha(
        level=level,
        value=float(alpha[0]),
        observed=float(observed[0]),
        expected=float(expected[0]),
        ci95=ci,
        resamples=resamples,
        resamples_used=used,
        seed=seed,
        items=int(pairable.shape[0]),
        raters=int(matrix.shape[1]),
        ratings=int((~np.isnan(pairable)).sum()),
    )
