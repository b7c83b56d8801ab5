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


def test_expanded_interval_takes_the_quantiles_of_hesterbergs_widened_level():
    """n = 8 items: sqrt(8/7) * t(0.975, 7) = 1.0690 * 2.3646 = 2.5279, Phi(-2.5279) =
    0.005738; so the 0.5738th and 99.4262nd percentiles (numpy's linear interpolation)."""
    from scipy.stats import norm
    from scipy.stats import t as student

    z = np.sqrt(8 / 7) * student.ppf(0.975, 7)
    assert z == pytest.approx(2.5279, abs=1e-4)
    assert norm.cdf(-z) == pytest.approx(0.005738, abs=1e-6)
    replicates = np.random.default_rng(3).normal(0.0, 1.0, 1000)
    tail = 100 * norm.cdf(-z)
    assert interval(replicates, method="expanded", items=8) == pytest.approx(
        np.percentile(replicates, [tail, 100 - tail]), abs=1e-15
    )
    # wider than the percentile interval; nearly the same on many items; none on one item
    low, high = interval(replicates, method="expanded", items=8)
    plow, phigh = interval(replicates)
    assert low < plow and high > phigh
    assert interval(replicates, method="expanded", items=5000) == pytest.approx(
        [plow, phigh], abs=0.01
    )
    assert interval(replicates, method="expanded", items=1) is None


def test_expanded_interval_covers_about_95_percent_on_few_items_where_percentile_does_not():
    """1000 simulated studies of 8 paired deltas (normal, true mean 0.3), each with the
    paired bootstrap's 1000 draws of a mean: how often each interval holds the true mean.
    This seed: percentile 0.876, expanded 0.944 (binomial SE about 0.007)."""
    rng = np.random.default_rng(1)
    covered = {"percentile": 0, "expanded": 0}
    for study in range(1000):
        deltas = rng.normal(0.3, 1.0, 8)
        weights = counts(draws(8, seed=study), 8)
        replicates = weighted_mean(weights, deltas)
        for method in covered:
            low, high = interval(replicates, method=method, items=8)
            covered[method] += low <= 0.3 <= high
    assert covered["percentile"] / 1000 < 0.91
    assert 0.925 <= covered["expanded"] / 1000 <= 0.97


class _Points:
    """An encoder whose embedding of a text is the point it names ("x,y")."""

    def prompt(self, *args):
        return None

    def embed(self, texts, prompt=None):
        return np.asarray([[float(v) for v in t.split(",")] for t in texts], dtype=np.float32)


def _clustered(protocol):
    from shiftbench.evaluate.evaluators import Scoring
    from shiftbench.evaluate.evaluators.clustering import evaluate

    rng = np.random.default_rng(6)
    centres = {"a": (0, 0), "b": (3, 0), "c": (0, 3)}
    rows = []
    for i in range(90):
        label = "abc"[i % 3]
        x, y = np.asarray(centres[label]) + rng.normal(scale=1.2, size=2)
        rows.append({"sentences": f"{x:.3f},{y:.3f}", "labels": label})
    source = {"name": "points", "task_type": "Clustering", "main_score": "v_measure",
              "text_fields": ["sentences"], "protocol": protocol}  # fmt: skip
    scoring = Scoring(source, _Points(), rows)
    return evaluate(scoring), scoring.replicate, rows


BOOTSTRAP = {"clustering": "bootstrap", "max_fraction": None, "max_documents": None,
             "cluster_size": 60, "n_clusters": 4, "batch_size": 32, "max_depth": None,
             "seed": 42}  # fmt: skip


@pytest.mark.parametrize(
    "protocol", [{"clustering": "legacy"}, BOOTSTRAP], ids=["legacy one set", "bootstrap"]
)
def test_clustering_draws_keep_the_fitted_clusters(protocol):
    """The draw that takes every document once gives the score itself (the clusters are
    the fitted ones), and a draw of documents twice each gives it again."""
    metrics, replicate, rows = _clustered(protocol)
    draws_ = np.vstack([np.ones(len(rows)), np.full(len(rows), 2.0)])
    assert replicate(draws_) == pytest.approx([metrics["v_measure"]] * 2, abs=1e-12)
