"""Resampling statistics shared by the stages: bootstrap intervals, paired bootstrap tests,
Holm's step-down correction. Every resampling draws from a seeded generator, so a report
is the same each time it is made from the same data.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BOOTSTRAP_SAMPLES = 2000
SEED = 0


def wilson_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion (successes of trials): unlike the normal
    approximation, it stays inside [0, 1] and is not zero-wide at 0 or all successes.
    (0, 1) when there are no trials."""
    from statistics import NormalDist

    if trials <= 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    p = successes / trials
    scale = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / scale
    half = z * ((p * (1 - p) / trials + z * z / (4 * trials * trials)) ** 0.5) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_mean_ci(
    values: Sequence[float], *, samples: int = BOOTSTRAP_SAMPLES, level: float = 0.95,
    seed: int = SEED,
) -> tuple[float, float]:  # fmt: skip
    """Percentile bootstrap interval of the mean (resampling the values with replacement)."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("no values to resample")
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(samples, data.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def bootstrap_statistic_ci(
    columns: Sequence[Sequence[float]],
    statistic: object,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    level: float = 0.95,
    seed: int = SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of `statistic(*columns)`, resampling rows (the same
    indices for every column, so paired data stay paired). Resamples where the statistic
    is undefined (NaN) are dropped."""
    data = [np.asarray(c, dtype=np.float64) for c in columns]
    n = data[0].size
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(samples):
        idx = rng.integers(0, n, size=n)
        value = statistic(*(c[idx] for c in data))  # type: ignore[operator]
        if np.isfinite(value):
            values.append(value)
    if not values:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


def spearman_or_nan(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho, or NaN when either side is constant (a statistic for
    bootstrap_statistic_ci, where a resample can be constant)."""
    from scipy.stats import spearmanr

    if np.unique(a).size < 2 or np.unique(b).size < 2:
        return float("nan")
    return float(spearmanr(a, b)[0])


def paired_bootstrap_p(
    a: Sequence[float], b: Sequence[float], *, samples: int = BOOTSTRAP_SAMPLES,
    seed: int = SEED,
) -> float:  # fmt: skip
    """Two-sided p-value for "mean(a) = mean(b)" on paired values.

    The paired differences are centred on zero (the null hypothesis) and resampled; the
    p-value is the share of resampled mean differences at least as far from zero as the
    observed one, counted with the observed one itself so it is never 0.
    """
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if diff.size == 0:
        raise ValueError("no pairs to compare")
    observed = abs(diff.mean())
    centred = diff - diff.mean()
    rng = np.random.default_rng(seed)
    means = centred[rng.integers(0, diff.size, size=(samples, diff.size))].mean(axis=1)
    extreme = int(np.sum(np.abs(means) >= observed - 1e-12))
    return (extreme + 1) / (samples + 1)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input's order (family-wise error)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


# --- Rank statistics over paired scores (datasets, models) ----------------------------------


def signed_rank_counts(n: int) -> np.ndarray:
    """How many of the 2**n sign patterns give each signed-rank sum W+ = 0 .. n(n+1)/2,
    for ranks 1..n without ties (the exact null distribution, by dynamic programming)."""
    top = n * (n + 1) // 2
    counts = np.zeros(top + 1, dtype=np.float64)
    counts[0] = 1.0
    for rank in range(1, n + 1):
        shifted = np.zeros_like(counts)
        shifted[rank:] = counts[:-rank] if rank <= top else 0.0
        counts = counts + shifted
    return counts


def wilcoxon_signed_rank(differences: Sequence[float] | np.ndarray) -> tuple[float, float, str]:
    """Two-sided Wilcoxon signed-rank test of "the differences are centred on zero", with
    the p-value scipy.stats.wilcoxon gives by default (method "auto", zero differences
    dropped, no continuity correction). Returns (statistic, p, method), the statistic being
    min(W+, W-) as scipy reports it, and the method one of:

    - "exact": at most 50 differences, none zero and no two of equal size; the p-value
      comes from the null distribution of W+ over all 2**n sign patterns;
    - "permutation": ties or zeros among at most 13 differences; the same enumeration of
      sign patterns, over the tied (average) ranks as they are, so still exact for these
      data (scipy runs it as a permutation test);
    - "normal": otherwise, the normal approximation with tie correction.

    n counts zero differences in these thresholds, as scipy does."""
    from scipy.stats import rankdata

    d = np.asarray(differences, dtype=np.float64)
    total = d.size
    d = d[d != 0]
    n = d.size
    if n == 0:
        return 0.0, 1.0, "exact"
    ranks = rankdata(np.abs(d))
    w_plus = float(ranks[d > 0].sum())
    w_minus = float(ranks[d < 0].sum())
    statistic = min(w_plus, w_minus)
    plain = n == total and np.unique(np.abs(d)).size == n
    if total <= 50 and plain:
        counts = signed_rank_counts(n)
        tail = counts[: int(statistic) + 1].sum() / counts.sum()
        return statistic, float(min(1.0, 2.0 * tail)), "exact"
    if total <= 13:
        # Average ranks are whole or half numbers: doubled, they index an array of counts.
        counts = sign_pattern_counts((2 * ranks).round().astype(int))
        observed = round(2 * w_plus)
        below, above = counts[: observed + 1].sum(), counts[observed:].sum()
        return statistic, float(min(1.0, 2.0 * min(below, above) / counts.sum())), "permutation"
    from scipy.stats import norm

    mean = n * (n + 1) / 4.0
    _, tie_sizes = np.unique(np.abs(d), return_counts=True)
    var = n * (n + 1) * (2 * n + 1) / 24.0 - float((tie_sizes**3 - tie_sizes).sum()) / 48.0
    z = (statistic - mean) / np.sqrt(var)
    return statistic, float(min(1.0, 2.0 * norm.cdf(z))), "normal"


def sign_pattern_counts(weights: np.ndarray) -> np.ndarray:
    """How many of the 2**n sign patterns give each sum 0 .. sum(weights) of the weights
    taken with a plus sign (whole-number weights, repeated values allowed)."""
    counts = np.zeros(int(weights.sum()) + 1, dtype=np.float64)
    counts[0] = 1.0
    for w in weights:
        shifted = np.zeros_like(counts)
        shifted[w:] = counts[: counts.size - w]
        counts = counts + shifted
    return counts


def hodges_lehmann(
    differences: Sequence[float] | np.ndarray, level: float = 0.95
) -> tuple[float, float, float, float]:
    """The Hodges-Lehmann shift of paired differences (the median of the Walsh averages
    (d_i + d_j) / 2, i <= j) with its distribution-free confidence interval from the exact
    signed-rank distribution. Returns (estimate, low, high, achieved level): with few
    pairs the interval cannot reach `level`, and the level it does reach is returned."""
    d = np.asarray(differences, dtype=np.float64)
    n = d.size
    if n == 0:
        raise ValueError("no differences")
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2.0)
    estimate = float(np.median(walsh))
    cdf = np.cumsum(signed_rank_counts(n)) / 2.0**n
    alpha = 1.0 - level
    # Shifts the exact two-sided test does not reject: with k the largest W+ value whose
    # lower tail is at most alpha/2, they run from the (k+1)-th to the (M-k)-th Walsh
    # average. With too few pairs no k exists; the interval is then the whole range of
    # Walsh averages, with the lower level it has.
    below = np.nonzero(cdf <= alpha / 2.0)[0]
    k = int(below[-1]) if below.size else 0
    achieved = max(0.0, 1.0 - 2.0 * float(cdf[k]))
    return estimate, float(walsh[k]), float(walsh[walsh.size - 1 - k]), achieved
