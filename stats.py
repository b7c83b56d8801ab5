"""Resampling statistics shared by the stages: bootstrap intervals, paired bootstrap tests,
Holm's step-down correction. Every resampling draws from a seeded generator, so a report
is the same each time it is made from the same data.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BOOTSTRAP_SAMPLES = 2000
SEED = 0


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
