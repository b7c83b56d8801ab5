"""The weighted statistics behind each delta's bootstrap interval equal the plain ones
(scipy, scikit-learn) on the drawn multiset written out."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from shiftbench.evaluate.resample import (
    counts,
    draws,
    interval,
    weighted_average_precision,
    weighted_mean,
    weighted_pearson,
    weighted_spearman,
    weighted_v_measure,
)


def test_draws_are_numpys_seeded_integers_counted_per_item(monkeypatch):
    from shiftbench.evaluate import resample

    drawn = draws(7, 1000, 5)
    assert (drawn == np.random.default_rng(5).integers(0, 7, size=(1000, 7))).all()
    tally = counts(drawn, 7)
    assert tally.shape == (1000, 7) and (tally.sum(axis=1) == 7).all()
    assert [list(np.bincount(d, minlength=7)) for d in drawn[:3]] == tally[:3].tolist()
    monkeypatch.setattr(resample, "BLOCK", 7 * 64)  # blocks of 64 draws: the same numbers
    blocks = list(resample.count_blocks(7, 1000, 5))
    assert len(blocks) == 16 and (np.concatenate(blocks) == tally).all()


def test_weighted_correlations_equal_scipy_on_the_multiset():
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=40), 1)  # rounded: many ties
    y = np.round(x + rng.normal(size=40), 1)
    drawn = draws(40, 50, 1)
    tally = counts(drawn, 40)
    rho, r = weighted_spearman(tally, x, y), weighted_pearson(tally, x, y)
    for b, d in enumerate(drawn):
        assert rho[b] == pytest.approx(spearmanr(x[d], y[d])[0], abs=1e-12)
        assert r[b] == pytest.approx(pearsonr(x[d], y[d])[0], abs=1e-12)


def test_weighted_average_precision_equals_sklearn_on_the_multiset():
    from sklearn.metrics import average_precision_score

    rng = np.random.default_rng(2)
    scores = np.round(rng.random(60), 2)
    labels = (rng.random(60) < scores).astype(int)
    drawn = draws(60, 50, 3)
    got = weighted_average_precision(counts(drawn, 60), scores, labels)
    for b, d in enumerate(drawn):
        assert got[b] == pytest.approx(average_precision_score(labels[d], scores[d]), abs=1e-12)


def test_weighted_v_measure_equals_sklearn_on_the_multiset():
    from sklearn.metrics import v_measure_score

    rng = np.random.default_rng(4)
    truth = rng.integers(0, 4, 80)
    assigned = np.where(rng.random(80) < 0.6, truth, rng.integers(0, 5, 80))
    drawn = draws(80, 50, 5)
    got = weighted_v_measure(counts(drawn, 80), truth, assigned)
    for b, d in enumerate(drawn):
        assert got[b] == pytest.approx(v_measure_score(truth[d], assigned[d]), abs=1e-12)


def test_weighted_mean_leaves_out_unscored_items_and_interval_is_the_percentiles():
    values = np.array([1.0, np.nan, 3.0])
    got = weighted_mean(np.array([[2, 1, 0], [0, 3, 0], [1, 0, 1]]), values)
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == 2.0
    replicates = np.array([np.nan, *np.arange(100.0)])
    assert interval(replicates) == pytest.approx(np.percentile(np.arange(100.0), [2.5, 97.5]))
    assert interval(np.array([np.nan])) is None
