"""The resampling statistics behind validate's comparisons."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy import stats as scipy_stats

from shiftbench.stats import (
    BOOTSTRAP_SAMPLES,
    bootstrap_mean_ci,
    hodges_lehmann,
    holm,
    paired_bootstrap_p,
    wilcoxon_signed_rank,
)


def test_holm_matches_the_step_down_procedure():
    # Sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> kept monotone: 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


def test_bootstrap_interval_is_seeded_and_brackets_the_mean():
    values = [3.0, 4.0, 4.5, 2.0, 5.0, 3.5, 4.0, 1.0]
    low, high = bootstrap_mean_ci(values)
    assert (low, high) == bootstrap_mean_ci(values)
    assert low < statistics.fmean(values) < high
    assert bootstrap_mean_ci([2.0, 2.0, 2.0]) == (2.0, 2.0)


def test_paired_bootstrap_p():
    same = [1.0, 2.0, 3.0, 4.0]
    assert paired_bootstrap_p(same, same) == 1.0
    better = [x + 1.0 for x in same]
    # Every resampled (centred) difference is 0, never as far out as the observed 1.
    assert paired_bootstrap_p(better, same) == 1 / (BOOTSTRAP_SAMPLES + 1)
    noisy_a = [3.1, 2.9, 4.2, 3.8, 2.5, 3.3, 4.0, 3.6]
    noisy_b = [3.0, 3.1, 4.0, 3.9, 2.7, 3.2, 4.1, 3.5]
    assert paired_bootstrap_p(noisy_a, noisy_b) > 0.5


@pytest.mark.parametrize("n", [1, 2, 3, 5, 6, 9, 14, 25, 50])
def test_wilcoxon_exact_equals_scipy(n):
    rng = np.random.default_rng(n)
    for shift in (0.0, 0.4, 1.5):
        d = rng.normal(shift, 1.0, n)
        statistic, p, method = wilcoxon_signed_rank(d)
        theirs = scipy_stats.wilcoxon(d, method="exact")
        assert method == "exact"
        assert statistic == theirs.statistic
        assert p == pytest.approx(theirs.pvalue, rel=1e-12)


def test_wilcoxon_with_ties_or_many_pairs_equals_scipy_normal_approximation():
    tied = [0.1, 0.1, -0.2, 0.3, 0.4, -0.05, 0.2, 0.25, 0.0]
    many = list(np.random.default_rng(7).normal(0.2, 1.0, 60))
    for d in (tied, many):
        statistic, p, method = wilcoxon_signed_rank(d)
        theirs = scipy_stats.wilcoxon(d, method="approx")
        assert method == "normal"
        assert (statistic, p) == pytest.approx((theirs.statistic, theirs.pvalue), rel=1e-12)


@pytest.mark.parametrize("n", [6, 8, 12, 20])
def test_hodges_lehmann_interval_is_the_inverted_exact_test(n):
    """The interval holds exactly the shifts the exact test (scipy's) does not reject."""
    d = np.random.default_rng(100 + n).normal(0.3, 1.0, n)
    estimate, low, high, level = hodges_lehmann(d)
    walsh = [(d[i] + d[j]) / 2 for i in range(n) for j in range(i, n)]
    assert estimate == pytest.approx(statistics.median(walsh))
    assert low < estimate < high and 0.95 <= level < 1.0

    def p(shift):
        return scipy_stats.wilcoxon(d - shift, method="exact").pvalue

    assert p(low + 1e-9) > 0.05 and p(high - 1e-9) > 0.05
    assert p(low - 1e-6) <= 0.05 and p(high + 1e-6) <= 0.05


def test_hodges_lehmann_with_too_few_pairs_reports_the_level_it_reaches():
    # Five pairs: the widest interval, all Walsh averages, covers 1 - 2/32.
    _, low, high, level = hodges_lehmann([0.1, 0.3, -0.2, 0.5, 0.4])
    assert (low, high) == (-0.2, 0.5)
    assert level == pytest.approx(1 - 2 / 32)
