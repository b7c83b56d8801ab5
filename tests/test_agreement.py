"""Gwet's AC1/AC2 against the irrCAC package (installed with --no-deps for the tests)."""

from __future__ import annotations

import irrCAC.datasets as irr_data
import irrCAC.raw as irr_raw
import numpy as np
import pandas as pd
import pytest

from shiftbench.human_eval.agreement import WEIGHTS, gwet, weight_matrix

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
