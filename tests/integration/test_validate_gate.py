"""What a release manager decides on: validate's table gives each config's error rate
with its 95% interval, and validation.md leads with that rate, the checks measured
unreliable for the config's language or source, and a way to the worst rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.files import read_rows

from shiftbench.validate import measure

SAMPLE = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")

# A measurement as measure-checks writes it, cut to the rows these tests need.
MEASURED = {
    "format": 1,
    "settings": {"goal": {"false_alarms": 0.005, "misses": 0.02}},
    "false_alarms": [
        {"check": "empty", "dataset": "BIOSSES", "language": "en", "data": "texts",
         "measured": True, "texts": 183, "alarms": 0, "rate": 0.0},
        {"check": "wrong-language", "dataset": "BIOSSES", "language": "en", "data": "texts",
         "measured": True, "texts": 183, "alarms": 6, "rate": 0.0328},
        {"check": "wrong-language", "dataset": "MRPC", "language": "en", "data": "texts",
         "measured": True, "texts": 500, "alarms": 1, "rate": 0.002},
        {"check": "wrong-language", "dataset": "MasakhaNEWSClusteringS2S", "language": "ha",
         "data": "texts", "measured": False, "why": "lingua does not know ha"},
    ],
    "misses": [
        {"check": "truncated", "kind": "cut to 50% of its words, no finish reason",
         "held_out": None, "dataset": "STSBenchmark", "language": "en", "measured": True,
         "planted": 100, "missed": 100, "rate": 1.0, "missed_by_all": 100},
        {"check": "truncated", "kind": "cut to 10% of its words, no finish reason",
         "held_out": None, "dataset": "STSBenchmark", "language": "en", "measured": True,
         "planted": 100, "missed": 7, "rate": 0.07, "missed_by_all": 7},
        {"check": "empty", "kind": "empty or whitespace", "held_out": False,
         "dataset": "STSBenchmark", "language": "de", "measured": True, "planted": 100,
         "missed": 50, "rate": 0.5, "missed_by_all": 0},
    ],
}  # fmt: skip


@pytest.fixture
def validated(scripted, invoke, tmp_path, monkeypatch):
    """The sample's first 4 rows paraphrased, one of them to "...", then validated with
    the measurement above packaged; the command's result and the run folder."""
    monkeypatch.setattr(measure, "measured", lambda: MEASURED)
    scripted.script = {SAMPLE[1]["sentence1"]: ["..."]}
    run = tmp_path / "run"
    made = invoke("gen", "sample", "-q", "-o", run, "--limit", "4", "-t", "paraphrase", "-s",
                  "1", "-b", "scripted")  # fmt: skip
    assert made.exit_code == 0, made.output
    result = invoke("validate", run, "-q", "--langid", "langdetect")
    assert result.exit_code == 0, result.output
    return result, run


def test_the_table_gives_the_error_rate_with_its_interval(validated):
    result, _ = validated
    assert result.output.splitlines() == [
        "run                      config                         rows  errors     95% interval "
        "edit dist",
        "run                      paraphrase-s1                     4   25.0%    [4.6%, 69.9%] "
        "    0.217",
        "                           meaning-changed: 25.0% (1 of 4 rows checked; a warning, not "
        "in errors)",
    ]


def test_validation_md_leads_with_the_decision(validated):
    _, run = validated
    lines = (run / "validation.md").read_text(encoding="utf-8").splitlines()
    assert lines[:8] == [
        "# Validation report",
        "",
        "## Decision",
        "",
        "Per config, the share of rows that failed any check with its 95% (Wilson) interval, "
        "and the checks measured unreliable for its languages or source (false alarms above "
        "0.5% or misses above 2% on real data, or no measurement possible; `shiftbench "
        "measure-checks`, see the validate guide); the rows to read first are under "
        "[Worst rows](#worst-rows).",
        "",
        "- **paraphrase-s1** (en): 25.0% of 4 rows failed a check, 95% interval [4.6%, 69.9%]. "
        "Checks measured unreliable for en or sample: wrong-language (false alarms 3.3% on "
        "BIOSSES en); truncated (misses 100.0% of 100 planted: cut to 50% of its words, no "
        "finish reason). The meaning check marked 25.0% of 4 rows meaning-changed (a warning, "
        "not in the rate above; see [Meaning](#meaning)).",
        "",
    ]
    assert "## Worst rows" in lines


def test_a_language_the_measurement_could_not_judge_is_named():
    """Hausa: language ID does not know it; Japanese: no data was measured in it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(measure, "measured", lambda: MEASURED)
        assert measure.unreliable(["ha", "ja"], "MasakhaNEWSClusteringS2S") == [
            "wrong-language (not measurable for ha)",
            "none measured on ja text",
        ]
        patch.setattr(measure, "measured", lambda: {})
        assert measure.unreliable(["en"]) is None


def test_the_packaged_measurement_is_read():
    assert measure.measured()["settings"]["command"] == measure.COMMAND
