"""The resampling statistics behind validate's comparisons."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy import stats as scipy_stats

from shiftbench.evaluate.report import (
    Pair,
    Unit,
    ranking_agreement,
    split_half_reliability,
    transform_tests,
)
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


def unit(model, dataset, original, **axis_scores):
    u = Unit(model, dataset, "default", "STS", original)
    for axis, (score, delta) in axis_scores.items():
        name = {"lexical": "paraphrase", "length": "expansion", "language": "translation"}[axis]
        u.transforms[name] = Pair(score, delta)
        u.axis_of[name] = {
            "lexical": "Lexical/Stylistic", "length": "Length", "language": "Language"
        }[axis]  # fmt: skip
    return u


def test_kendall_tau_between_original_and_transformed_rankings():
    summary = {
        m: {"original": o, "transforms": {"paraphrase": {"score": t, "delta": t - o}}, "axes": {}}
        for m, o, t in [("a", 0.9, 0.7), ("b", 0.8, 0.75), ("c", 0.6, 0.5)]
    }
    (row,) = ranking_agreement(summary)
    theirs = scipy_stats.kendalltau([0.9, 0.8, 0.6], [0.7, 0.75, 0.5])
    assert row["tau"] == pytest.approx(1 / 3) == pytest.approx(theirs.statistic)
    assert row["p"] == pytest.approx(theirs.pvalue)


def test_split_half_reliability_of_axis_profiles():
    """Profiles that every dataset agrees on are perfectly reliable; profiles that are
    noise are not; the same units give the same figure."""
    rng = np.random.default_rng(3)
    consistent, noisy = [], []
    for d in range(8):
        for m, (lex, length, lang) in enumerate([(-0.01, -0.05, -0.2), (-0.03, -0.1, -0.4)]):
            jitter = rng.normal(0, 0.001, 3)
            consistent.append(
                unit(f"m{m}", f"d{d}", 0.8, lexical=(0.8 + lex, lex + jitter[0]),
                     length=(0.8 + length, length + jitter[1]),
                     language=(0.8 + lang, lang + jitter[2]))
            )  # fmt: skip
            r = rng.normal(0, 0.1, 3)
            noisy.append(
                unit(f"m{m}", f"d{d}", 0.8, lexical=(0.8, r[0]), length=(0.8, r[1]),
                     language=(0.8, r[2]))
            )  # fmt: skip
    good = split_half_reliability(consistent)
    assert good["median_spearman"] == pytest.approx(1.0) and good["units"] == 8
    assert good == split_half_reliability(consistent)
    assert split_half_reliability(noisy)["median_spearman"] < 0.6
    assert split_half_reliability(consistent[:2]) is None


def test_transform_tests_over_datasets_and_models():
    """Per model over datasets, and over every (model, dataset) pair; p-values equal
    scipy's exact test; Holm runs across each group's transformations."""
    rng = np.random.default_rng(11)
    units = [
        unit(f"m{m}", f"d{d}", 0.8,
             lexical=(0.8, float(rng.normal(-0.02, 0.01))),
             length=(0.8, float(rng.normal(-0.05 * (m + 1), 0.01))))
        for m in range(2)
        for d in range(7)
    ]  # fmt: skip
    rows = {(r["model"], r["transform"]): r for r in transform_tests(units)}
    assert sorted(rows) == [
        ("(all models)", "expansion"), ("(all models)", "paraphrase"),
        ("m0", "expansion"), ("m0", "paraphrase"), ("m1", "expansion"), ("m1", "paraphrase"),
    ]  # fmt: skip
    for (model, name), row in rows.items():
        deltas = [u.transforms[name].delta for u in units if model in (u.model, "(all models)")]
        assert row["n"] == len(deltas) == (14 if model == "(all models)" else 7)
        assert row["p"] == pytest.approx(scipy_stats.wilcoxon(deltas, method="exact").pvalue)
        assert row["hodges_lehmann"] == pytest.approx(hodges_lehmann(deltas)[0])
    for model in ("m0", "m1", "(all models)"):
        ps = [rows[(model, t)]["p"] for t in ("paraphrase", "expansion")]
        assert [rows[(model, t)]["p_holm"] for t in ("paraphrase", "expansion")] == holm(ps)
