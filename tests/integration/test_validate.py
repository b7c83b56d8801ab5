"""`shiftbench validate` on run folders written by gen: reports, gating, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.files import read_rows

from shiftbench.validate.rowchecks import edit_distance

SAMPLE = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")


@pytest.fixture
def checked_run(scripted, invoke, tmp_path):
    """Four sample rows, paraphrased and translated by the scripted backend, which answers
    "REWRITTEN <input>" (so every translation stays English) except where scripted."""
    scripted.script = {
        SAMPLE[1]["sentence1"]: ["..."],
        SAMPLE[2]["sentence2"]: ['{"text": "Two kids build a sandcastle."}'],
    }
    out = tmp_path / "run"
    result = invoke(
        "gen", "sample", "--limit", "4", "-t", "paraphrase,translation", "-s", "1",
        "-b", "scripted", "-q", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_report_counts_each_check_and_each_row_once(checked_run, invoke):
    result = invoke("validate", checked_run)
    assert result.exit_code == 0, result.output
    report = json.loads((checked_run / "validation.json").read_text(encoding="utf-8"))
    assert list(report["configs"]) == ["paraphrase-s1", "translation-s1"]
    para = report["configs"]["paraphrase-s1"]
    assert para["rows"] == 4
    assert {k: v for k, v in para["error_counts"].items() if v} == {
        "ellipsis": 1,
        "json-fragment": 1,
        "truncated": 1,  # "..." is also far shorter than its input
    }
    assert (para["failed_rows"], para["total_error_rate"]) == (2, 0.5)
    # The translations came back in English: every row is in the wrong language.
    trans = report["configs"]["translation-s1"]
    assert trans["error_counts"]["wrong-language"] == 4
    assert trans["total_error_rate"] == 1.0
    assert trans["detected_languages"] == {"en": 8}
    example = trans["examples"]["wrong-language"][0]
    assert example["language"] != "en" and example["detected"] == "en"


def test_edit_distance_is_per_word_over_the_longer_text(checked_run, invoke):
    assert invoke("validate", checked_run, "--config", "translation-s1").exit_code == 0
    rows = read_rows(checked_run / "validation" / "translation-s1.jsonl")
    for row, source in zip(rows, SAMPLE, strict=False):
        for field in ("sentence1", "sentence2"):
            words = len(source[field].split())
            assert row["edit_distance"][field] == round(1 / (words + 1), 4)  # one word added
    assert edit_distance("a b c", "a x c") == pytest.approx(1 / 3)
    assert edit_distance("", "") == 0.0


def test_markdown_report_lists_rates_and_examples(checked_run, invoke):
    assert invoke("validate", checked_run).exit_code == 0
    text = (checked_run / "validation.md").read_text(encoding="utf-8")
    assert "| paraphrase-s1 | 4 | 50.0% |" in text
    assert "| translation-s1 | 4 | 100.0% |" in text
    assert "- **ellipsis** (test row 1, sentence1): " in text
    assert "(expected " in text and ", found en)" in text


def test_gate_exits_1_and_still_writes_the_reports(checked_run, invoke):
    result = invoke("validate", checked_run, "--max-error-rate", "0.6", "--meaning-encoder", "none")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: 1 config exceeds --max-error-rate 60.0%: run/translation-s1 (100.0%)\n"
    )
    assert (checked_run / "validation.json").is_file()
    assert invoke("validate", checked_run, "--max-error-rate", "1").exit_code == 0


def test_checking_one_config_keeps_the_others(checked_run, invoke):
    assert invoke("validate", checked_run).exit_code == 0
    before = json.loads((checked_run / "validation.json").read_text(encoding="utf-8"))
    assert invoke("validate", checked_run, "--config", "paraphrase-s1").exit_code == 0
    after = json.loads((checked_run / "validation.json").read_text(encoding="utf-8"))
    assert after["configs"] == before["configs"]
    assert sorted(p.name for p in (checked_run / "validation").iterdir()) == [
        "paraphrase-s1.jsonl",
        "translation-s1.jsonl",
    ]


def test_user_markers(checked_run, invoke, tmp_path):
    markers = tmp_path / "markers.json"
    markers.write_text(json.dumps({"prefix": {"en": ["rewritten"]}}), encoding="utf-8")
    try:
        assert invoke("validate", checked_run, "--markers", markers).exit_code == 0
    finally:
        from shiftbench.core.text.checks import use_markers

        use_markers(None)
    report = json.loads((checked_run / "validation.json").read_text(encoding="utf-8"))
    assert report["configs"]["paraphrase-s1"]["error_counts"]["prefix-leak"] == 4


def refused(result, message, run):
    assert result.exit_code == 2, result.output
    assert result.stderr == f"Error: {message}\n"
    assert not (run / "validation.json").exists()


def test_bad_input(checked_run, invoke, tmp_path):
    refused(
        invoke("validate", tmp_path),
        f"{tmp_path} is not a shiftbench run folder (no shiftbench.json)",
        tmp_path,
    )
    refused(
        invoke("validate", checked_run, "--config", "paraphrase-s2"),
        f"{checked_run} has no transformed config 'paraphrase-s2'; available: "
        "paraphrase-s1, translation-s1",
        checked_run,
    )
    refused(
        invoke("validate", checked_run, "--langid", "fasttext"),
        "unknown language identifier 'fasttext'; available: langdetect, lingua",
        checked_run,
    )
    missing = tmp_path / "none.json"
    refused(
        invoke("validate", checked_run, "--markers", missing),
        f"marker file {missing} does not exist",
        checked_run,
    )
    broken = tmp_path / "broken.json"
    broken.write_text('{"prefix": ["not", "by", "language"]}', encoding="utf-8")
    result = invoke("validate", checked_run, "--markers", broken)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: marker file {broken} is not a marker table (")
    assert not (checked_run / "validation.json").exists()


def test_identical_back_translations_are_counted_apart_from_errors(status_run, invoke):
    assert invoke("validate", status_run).exit_code == 0
    report = json.loads((status_run / "validation.json").read_text(encoding="utf-8"))
    back = report["configs"]["backtranslation-s1337"]
    assert (back["identical_rows"], back["identical_rate"]) == (2, round(2 / 42, 4))
    assert back["error_counts"]["identical"] == 0
    assert back["error_counts"]["truncated"] == 1  # the row cut at its budget
    assert back["failed_rows"] == 1
    rows = read_rows(status_run / "validation" / "backtranslation-s1337.jsonl")
    assert [(r["identical"], r["failed"]) for r in rows[:3]] == [
        (True, []),
        (True, []),
        (False, ["truncated"]),
    ]
    text = (status_run / "validation.md").read_text(encoding="utf-8")
    assert "| backtranslation-s1337 | 42 | 2.4% |" in text
    assert "| 4.8% | " in text  # the identical (kept) column


def test_identical_paraphrases_are_still_errors(scripted, invoke, tmp_path):
    scripted.script = {SAMPLE[0]["sentence1"]: [SAMPLE[0]["sentence1"]]}
    out = tmp_path / "run"
    args = ["gen", "sample", "--limit", "2", "--temperature", "0", "-b", "scripted", "-q"]
    assert invoke(*args, "-o", out, "--max-failure-rate", "1").exit_code == 0
    assert invoke("validate", out).exit_code == 0
    report = json.loads((out / "validation.json").read_text(encoding="utf-8"))
    para = report["configs"]["paraphrase-s1337"]
    assert (para["error_counts"]["identical"], para["failed_rows"]) == (1, 1)
    assert "identical_rows" not in para
    text = (out / "validation.md").read_text(encoding="utf-8")
    assert "| - | " in text  # no kept identical rows for a paraphrase
