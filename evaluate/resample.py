"""The paired bootstrap behind each delta's 95% interval.

Resamples are drawn once per (subset, split) over the original split's items in row order,
`numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))`, row b being draw b,
and the same draws serve every variant and every model of that split. A draw is held as a
weight matrix: `weights[b, i]` is how many times item i was drawn in draw b (0 for an
item a variant could not use). An evaluator turns such a matrix into one main score per
draw; the statistics here are frequency-weighted, so each equals the statistic of the
drawn multiset with its repeats written out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Required, TypedDict

import numpy as np

RESAMPLES = 1000
SEED = 0
LEVEL = 0.95
BLOCK = 1 << 21  # drawn items held in memory at once

# weights (resamples x items) -> one main score per resample (NaN where undefined)
Replicate = Callable[[np.ndarray], np.ndarray]


def draws(items: int, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """Item indices of every draw: `resamples` rows of `items` indices, with replacement."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, items, size=(resamples, items))


def counts(drawn: np.ndarray, items: int) -> np.ndarray:
    """How many times each item occurs in each draw (resamples x items)."""
    resamples = drawn.shape[0]
    flat = (np.arange(resamples)[:, None] * items + drawn).ravel()
    return np.bincount(flat, minlength=resamples * items).reshape(resamples, items)


def interval(
    replicates: np.ndarray,
    level: float = LEVEL,
    method: str = "percentile",
    items: int | None = None,
) -> list[float] | None:
    """The interval of the defined replicates (numpy's linear interpolation):

    - "percentile": their (1 - level) / 2 and (1 + level) / 2 quantiles;
    - "expanded": the expanded percentile interval (Hesterberg 2015), for few items: the
      quantiles at Phi(-sqrt(n / (n - 1)) * t), t being Student's quantile at
      (1 + level) / 2 with n - 1 degrees of freedom and n the items; wider than the
      percentile interval by the factors a t-interval has over a z-interval and the
      bootstrap's (n - 1) / n variance, so that few items cover about the level.
    """
    finite = replicates[np.isfinite(replicates)]
    share = tail_share(level, method, items)
    if finite.size == 0 or share is None:
        return None
    # (the percentile interval's level written as it always was: results stay identical
    # to the last bit)
    tail = 100 * (1 - level) / 2 if method != "expanded" else 100 * share
    low, high = np.percentile(finite, [tail, 100 - tail])
    return [float(low), float(high)]


def tail_share(level: float, method: str, items: int | None) -> float | None:
    """The share of draws below an interval's lower end (and above its upper end): (1 -
    level) / 2 for "percentile", Phi(-sqrt(n / (n - 1)) * t) for "expanded" (None with
    fewer than two items)."""
    if method != "expanded":
        return (1 - level) / 2
    if items is None or items < 2:
        return None
    from scipy.stats import norm
    from scipy.stats import t as student

    z = np.sqrt(items / (items - 1)) * student.ppf((1 + level) / 2, items - 1)
    return float(norm.cdf(-z))


def usable_draws(replicates: np.ndarray) -> int:
    """How many draws gave a defined delta (the ones the interval is made of)."""
    return int(np.isfinite(replicates).sum())


def rounded(replicates: np.ndarray, digits: int = 6) -> list[float | None]:
    """Replicates for JSON: rounded, an undefined one as null."""
    return [round(float(v), digits) if np.isfinite(v) else None for v in replicates]


# --- frequency-weighted statistics, one value per row of `weights` --------------------------


def weighted_mean(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mean of the drawn items' values; items whose value is NaN (not scored) are left
    out, as the full score leaves them out."""
    defined = np.isfinite(values)
    w = weights * defined
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(w @ np.where(defined, values, 0.0) / total, dtype=np.float64)


def weighted_pearson(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of the drawn pairs (x and y are per item, or per resample and item)."""
    w = weights.astype(np.float64)
    total = w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = x - (w * x).sum(axis=1, keepdims=True) / total
        dy = y - (w * y).sum(axis=1, keepdims=True) / total
        cov = (w * dx * dy).sum(axis=1)
        r = cov / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))
    return np.asarray(r, dtype=np.float64)


def weighted_ranks(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each item's rank within each draw, ties (repeats included) given their mean rank,
    as scipy's rankdata ranks the drawn multiset."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    start = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(start) - 1
    firsts = np.flatnonzero(start)
    lasts = np.r_[firsts[1:], ordered.size] - 1
    running = np.cumsum(weights[:, order], axis=1)  # whole counts: exact in any dtype
    below = np.where(firsts > 0, running[:, np.maximum(firsts - 1, 0)], 0.0)
    size = running[:, lasts] - below
    ranks = np.empty(weights.shape, dtype=np.float64)
    ranks[:, order] = (below + (size + 1) / 2)[:, group]
    return ranks


def weighted_spearman(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of the drawn pairs: Pearson's r of their ranks."""
    return weighted_pearson(weights, weighted_ranks(weights, x), weighted_ranks(weights, y))


def weighted_average_precision(
    weights: np.ndarray, scores: np.ndarray, labels: np.ndarray
) -> np.ndarray:
    """Average precision of the drawn items (higher score = predicted positive), with a
    step at each distinct score, as scikit-learn computes it."""
    order = np.argsort(-scores, kind="stable")
    ordered = scores[order]
    last = np.r_[ordered[1:] != ordered[:-1], True]
    w = weights[:, order].astype(np.float64)
    positive = labels[order] == 1
    tp = np.cumsum(w * positive, axis=1)[:, last]
    seen = np.cumsum(w, axis=1)[:, last]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(seen > 0, tp / np.where(seen > 0, seen, 1.0), 0.0)
        recall = tp / tp[:, -1:]
    step = np.diff(np.c_[np.zeros(len(w)), recall], axis=1)
    return np.asarray((step * precision).sum(axis=1), dtype=np.float64)


def weighted_v_measure(weights: np.ndarray, truth: np.ndarray, assigned: np.ndarray) -> np.ndarray:
    """V-measure of the drawn items against their fixed cluster assignment."""
    _, t = np.unique(truth, return_inverse=True)
    _, a = np.unique(assigned, return_inverse=True)
    cells = (int(t.max(initial=0)) + 1, int(a.max(initial=0)) + 1)
    table = cell_counts(np.arange(truth.size), t * cells[1] + a, truth.size, cells)
    return v_measure_of_tables(tallied(weights, table).reshape(-1, *cells))


def cell_counts(rows: np.ndarray, cell: np.ndarray, items: int, cells: tuple[int, int]) -> Any:
    """A sparse (items x label-cluster cells) count of which item falls in which cell."""
    from scipy.sparse import csr_matrix

    ones = np.ones(len(rows))
    return csr_matrix((ones, (rows, cell)), shape=(items, cells[0] * cells[1]))


def tallied(weights: np.ndarray, table: Any) -> np.ndarray:
    """The weighted contingency counts of each draw (draws x cells)."""
    return np.asarray((table.T @ weights.astype(np.float64).T).T)


def v_measure_of_tables(tables: np.ndarray) -> np.ndarray:
    """V-measure of each contingency table (labels x clusters), as scikit-learn's
    v_measure_score computes it from counts."""
    total = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = tables / total[:, None, None]
        rows, cols = p.sum(axis=2), p.sum(axis=1)
        expected = rows[:, :, None] * cols[:, None, :]
        mutual = np.where(p > 0, p * np.log(np.where(p > 0, p / expected, 1.0)), 0.0).sum(
            axis=(1, 2)
        )
        h_truth = -np.where(rows > 0, rows * np.log(np.where(rows > 0, rows, 1.0)), 0.0).sum(1)
        h_assigned = -np.where(cols > 0, cols * np.log(np.where(cols > 0, cols, 1.0)), 0.0).sum(1)
        homogeneity = np.where(h_truth > 0, mutual / h_truth, 1.0)
        completeness = np.where(h_assigned > 0, mutual / h_assigned, 1.0)
        v = np.where(
            homogeneity + completeness > 0,
            2 * homogeneity * completeness / (homogeneity + completeness),
            0.0,
        )
    return np.where(total > 0, v, np.nan)


def per_multiset(weights: np.ndarray, score: Callable[[np.ndarray], float]) -> np.ndarray:
    """For statistics with no weighted form: `score(indices)` of each draw's multiset
    (repeats written out); NaN where it is empty or the score fails."""
    out = np.full(len(weights), np.nan)
    items = np.arange(weights.shape[1])
    for b, row in enumerate(weights):
        picked = np.repeat(items, row.astype(np.int64))
        if picked.size:
            with contextlib.suppress(ValueError, ZeroDivisionError, FloatingPointError):
                out[b] = score(picked)
    return out


def count_blocks(items: int, resamples: int = RESAMPLES, seed: int = SEED) -> Iterator[np.ndarray]:
    """The draws' counts, a block of consecutive draws at a time: the very numbers of
    `draws(items, resamples, seed)` (a generator's stream read in order is the same in
    pieces), made afresh from the seed whenever needed so that no split holds all of its
    draws in memory."""
    rng = np.random.default_rng(seed)
    step = max(1, BLOCK // max(1, items))
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        yield counts(rng.integers(0, items, size=(size, items)), items)


def paired_delta(
    items: int,
    positions: Sequence[int],
    variant: Replicate,
    original: Replicate,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> np.ndarray:
    """delta_b = variant - original on each draw's usable items, for the draws over the
    original split's `items` rows. `positions[j]` is the original-split index of the j-th
    usable row, the order both sides were scored in."""
    columns = np.asarray(positions, dtype=np.int64)
    parts = [
        variant(block[:, columns]) - original(block[:, columns])
        for block in count_blocks(items, resamples, seed)
    ]
    return np.asarray(np.concatenate(parts), dtype=np.float64)


class IntervalFields(TypedDict, total=False):
    """A record's interval fields (core/records.py's ScoreRecord holds them)."""

    ci95: Required[list[float] | None]
    interval: str
    delta_replicates: Required[list[float | None] | None]
    resamples: Required[int | None]
    usable_draws: Required[int | None]


def record_fields(
    replicates: np.ndarray | None, method: str = "percentile", items: int | None = None
) -> IntervalFields:
    """What a record holds: the interval (`method`, over `items` items), the replicates,
    their number and how many of them are defined (or nulls)."""
    if replicates is None:
        return {"ci95": None, "delta_replicates": None, "resamples": None, "usable_draws": None}
    return {
        "ci95": interval(replicates, method=method, items=items),
        "interval": method,
        "delta_replicates": rounded(replicates),
        "resamples": int(replicates.size),
        "usable_draws": usable_draws(replicates),
    }
