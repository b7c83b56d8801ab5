"""validate's default meaning check: all-MiniLM-L6-v2 drift with a calibrated threshold, plus
a negation said or unsaid; a `meaning-changed` warning apart from the form checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.files import read_rows

from shiftbench.validate.meaning import DEFAULT_ENCODER, DEFAULT_THRESHOLD, MeaningCheck

SAMPLE = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
CRAF = "It has recently been shown that Craf is essential for Kras G12D-induced NSCLC."

# (original, rewrite): planted changes of meaning, then true paraphrases
PLANTED = [
    (CRAF, "It has recently been shown that Craf is not essential for Kras G12D-induced NSCLC."),
    (SAMPLE[1]["sentence1"], "The train to Lyon never left."),
    (SAMPLE[1]["sentence1"], "The stock market fell sharply after the announcement."),
    (SAMPLE[0]["sentence1"], "A man is repairing the chain of his bicycle."),
]
PARAPHRASES = [
    (CRAF, "Recent work has shown that Craf is essential for Kras G12D-induced NSCLC."),
    (SAMPLE[0]["sentence1"], SAMPLE[0]["sentence2"]),
    (SAMPLE[1]["sentence1"], SAMPLE[1]["sentence2"]),
    ("A man with a hard hat is dancing.", "A man wearing a hard hat is dancing."),
]


@pytest.fixture(scope="module")
def meaning_check() -> MeaningCheck:
    return MeaningCheck(DEFAULT_ENCODER, DEFAULT_THRESHOLD)


def test_planted_changes_are_caught_and_paraphrases_pass(meaning_check):
    assert [v.changed for v in meaning_check.judge(PLANTED)] == [True] * len(PLANTED)
    assert [v.changed for v in meaning_check.judge(PARAPHRASES)] == [False] * len(PARAPHRASES)


def test_the_issues_two_rewrites_are_documented_misses(meaning_check):
    # Small drift and no negation: the calibrated check sees neither "recently been shown"
    # become "Yesterday ... revealed" nor a hallucinated compound (validate guide, misses);
    # the evidence that would catch them raised too many false alarms to be used.
    misses = meaning_check.judge(
        [(CRAF, "Yesterday, it was revealed that Craf is the crucial ingredient for Kras "
                "G12D-induced NSCLC."),
         (CRAF, "Craf is essential for Kras G12D-induced NSCLC, as 5-hexteramidine showed.")]
    )  # fmt: skip
    assert [(v.changed, v.drift) for v in misses] == [(False, 0.0316), (False, 0.0787)]


def test_held_out_biosses_figures_equal_the_guides(meaning_check, shared_data):
    """BIOSSES was not used to choose the threshold; the guide's row for it is this."""
    rows = read_rows(shared_data / "BIOSSES" / "data" / "test.jsonl")
    same = [(r["sentence1"], r["sentence2"]) for r in rows if r["score"] >= 3]
    changed = [(r["sentence1"], r["sentence2"]) for r in rows if r["score"] <= 1]
    false_alarms = sum(v.changed for v in meaning_check.judge(same))
    caught = sum(v.changed for v in meaning_check.judge(changed))
    assert (len(same), false_alarms, len(changed), caught) == BIOSSES_FIGURES


@pytest.fixture
def planted_run(scripted, invoke, tmp_path):
    """Four sample rows paraphrased by the scripted backend ("REWRITTEN <input>"), two of
    them changed in meaning, and translated (the meaning check leaves translations alone)."""
    scripted.script = {
        SAMPLE[1]["sentence1"]: ["The train to Lyon never left."],
        SAMPLE[2]["sentence1"]: ["The stock market fell sharply after the announcement."],
        SAMPLE[3]["sentence1"]: ["A man is fixing the chain of his bike."],
    }
    out = tmp_path / "run"
    result = invoke(
        "gen", "sample", "--limit", "4", "-t", "paraphrase,translation", "-s", "1",
        "-b", "scripted", "-q", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_validate_marks_meaning_changed_rows_apart_from_the_errors(planted_run, invoke):
    result = invoke("validate", planted_run, "-q")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].split()[:4] == ["run", "paraphrase-s1", "4", "0.0%"]
    assert lines[2].strip() == (
        "meaning-changed: 50.0% (2 of 4 rows checked; a warning, not in errors)"
    )
    assert lines[3].split()[1] == "translation-s1" and len(lines) == 4
    report = json.loads((planted_run / "validation.json").read_text(encoding="utf-8"))
    para = report["configs"]["paraphrase-s1"]
    assert para["total_error_rate"] == 0.0
    assert {k: para["meaning"][k] for k in ("checked_rows", "changed_rows", "changed_rate")} == {
        "checked_rows": 4, "changed_rows": 2, "changed_rate": 0.5,
    }  # fmt: skip
    assert "meaning" not in report["configs"]["translation-s1"]
    rows = read_rows(planted_run / "validation" / "paraphrase-s1.jsonl")
    assert [r.get("warnings", []) for r in rows] == [
        [], ["meaning-changed"], ["meaning-changed"], [],
    ]  # fmt: skip
    assert rows[1]["meaning_evidence"] == {"sentence1": ["negation"]}
    assert [r["failed"] for r in rows] == [[], [], [], []]
    text = (planted_run / "validation.md").read_text(encoding="utf-8")
    assert "| paraphrase-s1 | 4 | 50.0% | 0 |" in text
    # the decision line says the warning's rate too, apart from the errors
    assert (
        "The meaning check marked 50.0% of 4 rows meaning-changed (a warning, not in the rate "
        "above; see [Meaning](#meaning))."
    ) in text
    # the encoder is named as every table names a model (it read '?' once)
    assert "when a field's drift under all-MiniLM-L6-v2 is above 0.45 " in text
    assert (
        "- **meaning-changed** (paraphrase-s1, test row 1, sentence1; drift 0.3868, negation): "
        "`The train to Lyon left twenty minutes late.` → `The train to Lyon never left.`"
    ) in text


def test_its_own_gate_and_its_off_switch(planted_run, invoke):
    result = invoke("validate", planted_run, "-q", "--max-meaning-changed-rate", "0.25")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: 1 config exceeds --max-meaning-changed-rate 25.0%: run/paraphrase-s1 (50.0%)\n"
    )
    assert invoke("validate", planted_run, "-q", "--max-meaning-changed-rate", "0.5").exit_code == 0
    gated = invoke("validate", planted_run, "-q", "--max-error-rate", "0.6")
    assert gated.exit_code == 1  # the form checks' gate: the meaning check is not in it
    assert gated.stderr == (
        "Error: 1 config exceeds --max-error-rate 60.0%: run/translation-s1 (100.0%)\n"
    )
    result = invoke("validate", planted_run, "-q", "--meaning-encoder", "none")
    assert result.exit_code == 0 and "meaning-changed" not in result.stdout
    report = json.loads((planted_run / "validation.json").read_text(encoding="utf-8"))
    assert "meaning" not in report["configs"]["paraphrase-s1"]


def test_an_encoder_that_cannot_load_is_a_note_not_a_crash(planted_run, invoke, tmp_path):
    missing = tmp_path / "no-such-model"
    result = invoke("validate", planted_run, "-q", "--meaning-encoder", missing)
    assert result.exit_code == 0
    assert result.stderr == (
        f"meaning check skipped (the form checks still run): cannot load encoder '{missing}': "
        f"not a local folder, and the Hugging Face Hub did not provide it (Path {missing} not "
        "found)\n"
    )
    assert result.stdout.splitlines()[1].split()[:4] == ["run", "paraphrase-s1", "4", "0.0%"]


# the guide's BIOSSES rows: 41 pairs of gold >= 3 (5 flagged, 12.2%), 20 of gold <= 1
# (all 20 flagged)
BIOSSES_FIGURES = (41, 5, 20, 20)
