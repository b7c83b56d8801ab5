"""Gwet's AC1/AC2 against the irrCAC package (installed with --no-deps for the tests), and
Krippendorff's alpha against the krippendorff package."""

from __future__ import annotations

import irrCAC.datasets as irr_data
import irrCAC.raw as irr_raw
import krippendorff
import numpy as np
import pandas as pd
import pytest

from shiftbench.human_eval.agreement import (
    LEVELS,
    WEIGHTS,
    gwet,
    krippendorff_alpha,
    weight_matrix,
)

SCALE = [1, 2, 3, 4, 5]


def irrcac(frame: pd.DataFrame, points, weights):
    # The full category list must be passed: under pandas 3 irrCAC otherwise counts NaN
    # (a missing rating) as a category of its own.
    return irr_raw.CAC(frame, weights=weights, categories=list(points)).gwet()["est"]


def test_fixture_with_ordinal_weights():
    """irrCAC's own 4-rater, 12-item fixture: pa 0.968, pe 0.685, AC2 0.899, SE 0.107."""
    frame = irr_data.raw_4raters()
    result = gwet(frame.to_numpy(), SCALE, "ordinal")
    assert (result.coefficient, result.items, result.raters, result.ratings) == ("AC2", 12, 4, 41)
    rounded = [round(x, 3) for x in (result.pa, result.pe, result.value, result.se)]
    assert rounded == [0.968, 0.685, 0.899, 0.107]
    theirs = irrcac(frame, SCALE, "ordinal")
    assert result.value == pytest.approx(float(theirs["coefficient_value"]), abs=5e-6)
    assert result.se == pytest.approx(float(theirs["se"]), abs=5e-6)
    assert result.ci95[0] == pytest.approx(float(theirs["confidence_interval"][0]), abs=5e-6)
    assert result.p_value == pytest.approx(float(theirs["p_value"]), rel=1e-6)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("weights", WEIGHTS)
def test_random_matrices_match_irrcac(seed, weights):
    rng = np.random.default_rng(seed)
    items, raters = int(rng.integers(5, 40)), int(rng.integers(2, 7))
    points = [0, 1, 2, 3, 4, 5] if seed % 2 else SCALE
    truth = rng.choice(points, size=items)
    noise = rng.integers(-1, 2, size=(items, raters))
    matrix = np.clip(truth[:, None] + noise, min(points), max(points)).astype(float)
    matrix[rng.random(matrix.shape) < 0.25] = np.nan  # missing ratings
    matrix[0, :] = np.nan  # an item nobody rated is left out
    frame = pd.DataFrame(matrix)
    ours = gwet(matrix, points, weights)
    theirs = irrcac(frame, points, weights)
    assert ours.value == pytest.approx(float(theirs["coefficient_value"]), abs=5e-6)
    assert ours.pa == pytest.approx(float(theirs["pa"]), abs=5e-6)
    assert ours.pe == pytest.approx(float(theirs["pe"]), abs=5e-6)
    assert ours.se == pytest.approx(float(theirs["se"]), abs=5e-6)
    assert ours.items == int((~np.isnan(matrix)).any(axis=1).sum()) < items


def test_unused_scale_points_count():
    """A 1-5 scale where raters only used 3-5 has more room for chance agreement to be
    small; dropping the unused points would inflate chance agreement."""
    matrix = np.array([[3, 3], [4, 4], [5, 4], [5, 5], [4, 3]], dtype=float)
    full = gwet(matrix, SCALE, "identity")
    used = gwet(matrix, [3, 4, 5], "identity")
    assert full.pa == used.pa
    assert full.pe < used.pe and full.value > used.value


def test_weights_and_bad_input():
    assert weight_matrix([1, 2, 3], "linear").tolist() == [
        [1.0, 0.5, 0.0],
        [0.5, 1.0, 0.5],
        [0.0, 0.5, 1.0],
    ]
    assert weight_matrix([1, 2, 3], "ordinal")[0].tolist() == pytest.approx([1.0, 2 / 3, 0.0])
    with pytest.raises(ValueError, match=r"ratings \[7.0\] are not on the scale"):
        gwet([[1, 7], [2, 2]], SCALE)
    with pytest.raises(ValueError, match="no item has two or more ratings"):
        gwet([[1, np.nan], [np.nan, 2]], SCALE)


# -- Krippendorff's alpha, against the krippendorff package ------------------------------


def package_alpha(matrix: np.ndarray, points, level: str) -> float:
    """The krippendorff package's alpha; it takes raters x items."""
    theirs = krippendorff.alpha(matrix.T, value_domain=list(points), level_of_measurement=level)
    return float(theirs)


def test_alpha_on_krippendorffs_own_example():
    """Krippendorff's worked example (4 observers, 12 units, values 1-5, one unit with a
    single value): nominal 0.743, ordinal 0.815, interval 0.849."""
    nan = np.nan
    observers = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}
    for level, value in published.items():
        ours = krippendorff_alpha(observers.T, SCALE, level)
        assert round(ours.value, 3) == value
        assert ours.value == pytest.approx(package_alpha(observers.T, SCALE, level), abs=1e-12)
        assert (ours.items, ours.raters, ours.ratings) == (11, 4, 40)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", LEVELS)
def test_alpha_on_random_matrices_matches_the_package(seed, level):
    rng = np.random.default_rng(100 + seed)
    items, raters = int(rng.integers(4, 60)), int(rng.integers(2, 7))
    points = [0, 1, 2, 3, 4, 5] if seed % 2 else SCALE
    truth = rng.choice(points, size=items)
    noise = rng.integers(-2, 3, size=(items, raters))
    matrix = np.clip(truth[:, None] + noise, min(points), max(points)).astype(float)
    matrix[rng.random(matrix.shape) < 0.3] = np.nan
    ours = krippendorff_alpha(matrix, points, level, resamples=0)
    assert ours.value == pytest.approx(package_alpha(matrix, points, level), abs=1e-10)
    assert ours.ci95 is None and ours.resamples_used == 0


def test_alpha_bootstrap_is_the_package_alpha_of_resampled_items():
    """The interval's draws, redone by hand: the same multinomial item counts, each
    resampled matrix scored by the krippendorff package, the same percentiles."""
    rng = np.random.default_rng(7)
    matrix = np.clip(rng.integers(1, 6, size=30)[:, None] + rng.integers(-1, 2, (30, 3)), 1, 5)
    matrix = matrix.astype(float)
    matrix[rng.random(matrix.shape) < 0.2] = np.nan
    pairable = matrix[(~np.isnan(matrix)).sum(axis=1) >= 2]
    for level in ("ordinal", "interval"):
        ours = krippendorff_alpha(matrix, SCALE, level, resamples=200, seed=3)
        draws = np.random.default_rng(3).multinomial(
            len(pairable), np.full(len(pairable), 1 / len(pairable)), size=200
        )
        values = [package_alpha(np.repeat(pairable, d, axis=0), SCALE, level) for d in draws]
        low, high = np.percentile(values, [2.5, 97.5])
        assert ours.ci95 == pytest.approx((low, high), abs=1e-10)
        assert ours.resamples_used == 200


def test_alpha_without_signal_is_near_zero_and_its_interval_covers_zero():
    """Raters who rate at random agree only by chance: alpha scatters around 0, and the
    95% interval holds 0 in about 95% of such studies."""
    covered, values = 0, []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        matrix = rng.integers(1, 6, size=(60, 3)).astype(float)
        result = krippendorff_alpha(matrix, SCALE, "ordinal", resamples=500, seed=seed)
        values.append(result.value)
        covered += result.ci95[0] <= 0 <= result.ci95[1]
    assert abs(float(np.mean(values))) < 0.02
    assert covered >= 34  # 36 or more expected; 34 leaves room for chance


def test_alpha_edge_cases():
    perfect = np.array([[1, 1], [3, 3], [5, 5], [2, 2]], dtype=float)
    result = krippendorff_alpha(perfect, SCALE, "interval", resamples=100)
    assert result.value == 1.0 and result.observed == 0.0
    again = krippendorff_alpha(perfect, SCALE, "interval", resamples=100)
    assert again == result  # the same seed gives the same interval
    with pytest.raises(ValueError, match="every rating is the same value"):
        krippendorff_alpha(np.full((4, 2), 3.0), SCALE, "ordinal")
    with pytest.raises(ValueError, match="no item has two or more ratings"):
        krippendorff_alpha(np.array([[1, np.nan], [np.nan, 2]]), SCALE)
    with pytest.raises(ValueError, match=r"ratings \[7.0\] are not on the scale"):
        krippendorff_alpha(np.array([[1, 7], [2, 2]], dtype=float), SCALE)
    with pytest.raises(ValueError, match="unknown level 'ratio'"):
        krippendorff_alpha(perfect, SCALE, "ratio")
    # a scale point nobody used changes nothing: its frequency is 0
    noisy = np.array([[1, 2], [3, 3], [5, 3], [2, 2], [5, 5]], dtype=float)
    for level in LEVELS:
        assert krippendorff_alpha(noisy, [1, 2, 3, 5], level).value == pytest.approx(
            krippendorff_alpha(noisy, SCALE, level).value, abs=1e-12
        )
