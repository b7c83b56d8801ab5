"""The resampling statistics behind validate's comparisons."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy import stats as scipy_stats

from shiftbench.core.stats import (
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
        theirs = scipy_stats.wilcoxon(d)  # scipy's default method
        assert method == "exact"
        assert statistic == theirs.statistic
        assert p == pytest.approx(theirs.pvalue, rel=1e-12)


def test_wilcoxon_with_ties_or_zeros_among_few_enumerates_the_sign_patterns():
    # Worked by hand: the zero is dropped, ranks 1..6, W- = 3; of the 64 sign patterns, 5
    # give a rank sum of at most 3 ({}, {1}, {2}, {3}, {1, 2}): p = 2 * 5 / 64.
    assert wilcoxon_signed_rank([1, 2, 0, -3, 4, 5, 6]) == (3.0, 0.15625, "permutation")
    # Tied sizes (average ranks): the normal approximation gave 0.0797 here; scipy's
    # default enumerates the 2**8 sign patterns over the tied ranks, 11/128.
    tied = [0.1, 0.1, -0.2, 0.3, 0.4, -0.05, 0.2, 0.25, 0.0]
    assert wilcoxon_signed_rank(tied) == (5.5, 11 / 128, "permutation")
    rng = np.random.default_rng(3)
    for n in (4, 7, 10, 13):
        for _ in range(5):
            d = rng.integers(-3, 6, n).astype(float)  # ties and zeros
            if not d.any():
                continue
            statistic, p, method = wilcoxon_signed_rank(d)
            theirs = scipy_stats.wilcoxon(d)
            assert method == ("exact" if len(set(np.abs(d))) == n and d.all() else "permutation")
            assert (statistic, p) == pytest.approx((theirs.statistic, theirs.pvalue), rel=1e-12)


def test_wilcoxon_with_ties_or_zeros_among_many_or_over_50_is_scipy_normal_approximation():
    rng = np.random.default_rng(7)
    tied = list(np.round(rng.normal(0.2, 1.0, 20), 1))
    with_zero = [*rng.normal(0.2, 1.0, 20), 0.0]  # no ties: a zero is enough
    many = list(rng.normal(0.2, 1.0, 60))
    for d in (tied, with_zero, many):
        statistic, p, method = wilcoxon_signed_rank(d)
        theirs = scipy_stats.wilcoxon(d)
        assert method == "normal"
        assert (statistic, p) == pytest.approx((theirs.statistic, theirs.pvalue), rel=1e-12)


def test_wilcoxon_on_signal_free_tied_data_rejects_at_most_as_often_as_its_level():
    """Symmetric integer differences (many ties, some zeros): the enumerated p-value is
    exact, so at most 5% of 2000 such samples fall below 0.05 (up to sampling error)."""
    rng = np.random.default_rng(11)
    rejected = sum(
        wilcoxon_signed_rank(rng.integers(-4, 5, 12).astype(float))[1] <= 0.05 for _ in range(2000)
    )
    assert rejected / 2000 <= 0.05 + 3 * (0.05 * 0.95 / 2000) ** 0.5


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
