"""The resampling statistics behind validate's comparisons."""

from __future__ import annotations

import statistics

import pytest

from shiftbench.stats import (
    BOOTSTRAP_SAMPLES,
    bootstrap_mean_ci,
    holm,
    paired_bootstrap_p,
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
