"""The packaged measurement of the checks (validate/measured.json) and the validate
guide's table are what `shiftbench measure-checks` makes of the real data, and the
held-out plants share nothing with the marker lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiftbench.core.text.checks import CHECKS, markers
from shiftbench.validate import measure, planted

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "validate.md"


@pytest.fixture(scope="module")
def remeasured(shared_data: Path) -> dict:
    """The measurement made again, with the packaged one's caps and seed."""
    settings = measure.measured()["settings"]
    return measure.measure_checks(
        shared_data, cap=settings["cap"], plant_cap=settings["plant_cap"], seed=settings["seed"]
    )


def test_the_packaged_measurement_is_the_data_s(remeasured):
    """Each check's false alarms and misses, row by row, as packaged (after a change to a
    check or to language ID: `shiftbench measure-checks ../shared/data --write`)."""
    packaged = measure.measured()
    assert remeasured["settings"] == packaged["settings"]
    for part in ("false_alarms", "misses"):
        assert remeasured[part] == packaged[part], part
    assert measure.dumps(remeasured) == measure.packaged_path().read_text(encoding="utf-8")


def test_every_check_is_measured(remeasured):
    planted = {m["check"] for m in remeasured["misses"]}
    alarmed = {r["check"] for r in remeasured["false_alarms"]}
    assert planted == set(CHECKS)
    assert alarmed | set(remeasured["settings"]["not_measured"]) == set(CHECKS)


def test_the_guide_shows_the_packaged_table():
    page = GUIDE.read_text(encoding="utf-8")
    assert measure.with_table(page, measure.measured()) == page


def test_held_out_phrasings_hold_no_marker():
    """Otherwise their miss rate would measure the list, not what it did not foresee."""
    table = markers()
    for phrasing in planted.held_out_phrasings():
        lowered = phrasing.lower()
        assert not any(m in lowered for m in table["reasoning"]), phrasing
        assert not any(lowered.startswith(m) for m in table["prefix"]), phrasing


def test_a_data_folder_short_of_a_dataset_is_refused(invoke, tmp_path):
    (tmp_path / "STSBenchmark").mkdir()
    result = invoke("measure-checks", tmp_path / "none")
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: {tmp_path / 'none'}: no such folder (the shared data folder is needed)"
    )
    result = invoke("measure-checks", tmp_path)
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: {tmp_path} has no BIOSSES/data/test.jsonl: the measurement needs every "
        "dataset of the shared data folder (BIOSSES, Banking77Classification, MRPC, "
        "MasakhaNEWSClusteringS2S, STSBenchmark, STSBenchmarkMultilingualSTS, XQuADRetrieval)"
    )
