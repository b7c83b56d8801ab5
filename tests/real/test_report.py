"""The report's figures and statistics, each checked against an independent computation
(scipy, numpy, or a hand-worked case) and against signal-free synthetic results."""

from __future__ import annotations

import numpy as np
import pytest
from support.report import axis_documents

from shiftbench.evaluate.report.statistics import split_half_reliability
from shiftbench.evaluate.report.units import dataset_units, scored_units


def test_split_half_is_near_zero_without_model_signal():
    """Signal-free results: the models' axis figures are noise around axis-wide offsets.
    Pooling every (model, axis) into one correlation reads the offsets as reliability;
    the per-axis figure must not. One synthetic result set's median still wanders with
    its own noise, so five are drawn: each stays small, and their mean is near 0."""
    medians = []
    for seed in range(5):
        docs = axis_documents(np.random.default_rng(seed), models=30, datasets=24, signal=0.0)
        half = split_half_reliability(dataset_units(scored_units(docs)), draws=300)
        assert set(half["axes"]) == {"Lexical/Stylistic", "Length", "Language"}
        for v in half["axes"].values():
            assert abs(v["median"]) < 0.35
            assert v["low"] < 0 < v["high"]
            assert v["draws"] == 300
            medians.append(v["median"])
    assert abs(np.mean(medians)) < 0.1
    strong = split_half_reliability(
        dataset_units(scored_units(axis_documents(np.random.default_rng(5), 8, 24, signal=20.0))),
        draws=200,
    )
    for v in strong["axes"].values():
        assert v["median"] > 0.9
        assert v["spearman_brown"] == pytest.approx(2 * v["median"] / (1 + v["median"]))
    negative = [v for v in half["axes"].values() if v["median"] <= 0]
    assert all(v["spearman_brown"] is None for v in negative)
