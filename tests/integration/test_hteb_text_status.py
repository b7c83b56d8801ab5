"""Each rewritten text's own status: a row says which of its texts failed and why, and
`--protocol hteb` and `hteb export` put back or write empty exactly those texts, as HTEB
does (its generator gives up on one text, not on a row)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.environment import ENCODER
from support.files import read_rows

from shiftbench.core.data.hteb import latest_pair, read_pair

FIELDS = ("sentence1", "sentence2")
PLACEHOLDER, CUT = (1, "sentence2"), (3, "sentence1")  # (row, field) of each failure


def _generated(invoke, scripted, shared_data, run):
    """Six STSBenchmark pairs paraphrased by the scripted generator, which answers "N/A"
    for row 1's second sentence and is still cut at its budget on row 3's first."""
    source = read_rows(shared_data / "STSBenchmark" / "data" / "test.jsonl")[:6]
    scripted.script = {source[PLACEHOLDER[0]][PLACEHOLDER[1]]: ["N/A"] * 9}
    scripted.length_for = {source[CUT[0]][CUT[1]]}
    made = invoke("gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit",
                  "6", "-t", "paraphrase", "-s", "7", "-b", "scripted", "--max-failure-rate",
                  "1", "-q", "-o", run)  # fmt: skip
    assert made.exit_code == 0, made.output
    return source


def _as_hteb_scores(source):
    """The texts HTEB scores for the run: each rewrite as written, but the original in
    the place of the two texts its generator would have given up on."""
    return [
        tuple(row[f] if (i, f) in (PLACEHOLDER, CUT) else f"REWRITTEN {row[f]}" for f in FIELDS)
        for i, row in enumerate(source)
    ]


def test_a_row_records_which_of_its_texts_failed_and_hteb_scoring_restores_only_those(
    shared_data, scripted, invoke, tmp_path
):
    from scipy.stats import spearmanr
    from sklearn.metrics.pairwise import paired_cosine_distances

    from shiftbench.core.models.encoders import Encoder

    run = tmp_path / "run"
    source = _generated(invoke, scripted, shared_data, run)
    rows = read_rows(run / "paraphrase-s7" / "test.jsonl")
    # the cut is the first sentence's alone; "N/A" passes gen's checks, but not HTEB's
    assert [(r["status"], r["status_sentence1"], r["status_sentence2"]) for r in rows] == [
        ("truncated", "truncated", "ok") if i == CUT[0] else ("ok", "ok", "ok") for i in range(6)
    ]
    assert rows[PLACEHOLDER[0]][PLACEHOLDER[1]] == "N/A"

    out = tmp_path / "results"
    result = invoke("evaluate", run, "--protocol", "hteb", "-m", ENCODER, "--no-plots",
                    "--resamples", "0", "-q", "--precision", "float32", "-o", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    variant = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ][1]
    assert (variant["config"], variant["rows"]) == ("paraphrase-s7", 6)
    assert variant["restored"] == {"rows": 2, "texts": 2, "kept_as_written": 0}
    # HTEB's figure, worked out here: Spearman of float32 cosines against the gold scores
    texts = _as_hteb_scores(source)
    encoder = Encoder(ENCODER)
    a = encoder.embed([t[0] for t in texts]).astype(np.float32)
    b = encoder.embed([t[1] for t in texts]).astype(np.float32)
    cosine = (1 - paired_cosine_distances(a, b)).astype(np.float64)
    expected = spearmanr([r["score"] for r in source], cosine)[0]
    assert variant["main_score"] == pytest.approx(expected, abs=1e-6)


def test_an_export_writes_empty_exactly_the_texts_hteb_scoring_restores(
    shared_data, scripted, invoke, tmp_path
):
    """The placeholder and the one cut sentence are written empty, so HTEB's reuse mode
    (an empty text scored on its original) scores the texts --protocol hteb scores; a run
    folder written before rows had a status per text has both texts of its cut row empty."""
    run = tmp_path / "run"
    source = _generated(invoke, scripted, shared_data, run)

    def exported(output):
        result = invoke("hteb", "export", run, "-o", output, "--generator", "org/scripted-7b")
        assert result.exit_code == 0, result.output
        folder = output / "org~2Fscripted-7b" / "stsbenchmark-sts" / "paraphrasing" / "7"
        pair = latest_pair(folder)
        return read_pair(pair)[1], pair.metadata["generation_statistics"]

    records, stats = exported(tmp_path / "export")
    assert [tuple(r[f] for f in FIELDS) for r in records] == [
        tuple("" if (i, f) in (PLACEHOLDER, CUT) else f"REWRITTEN {row[f]}" for f in FIELDS)
        for i, row in enumerate(source)
    ]
    reuse = [tuple(r[f] or row[f] for f in FIELDS) for r, row in zip(records, source, strict=True)]
    assert reuse == _as_hteb_scores(source)
    assert (stats["records_with_fallback"], stats["text_fields_with_fallback"]) == (2, 2)

    # an older run folder: no status_<field>, so a cut row's texts are both given up
    path = run / "paraphrase-s7" / "test.jsonl"
    old = [{k: v for k, v in r.items() if not k.startswith("status_")} for r in read_rows(path)]
    path.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    records, _ = exported(tmp_path / "export-old")
    assert [records[CUT[0]][f] for f in FIELDS] == ["", ""]
    assert records[PLACEHOLDER[0]]["sentence2"] == ""


def test_an_import_records_the_text_htebs_generator_gave_up_on(sts_tree, invoke, tmp_path):
    """paraphrasing/1338 holds one fallback, row 5's second sentence: that text, and no
    other, has the status `fallback`."""
    out = tmp_path / "run"
    result = invoke("hteb", "import", sts_tree, "-o", out)
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "paraphrase-s1338" / "test.jsonl")
    assert [(r["status_sentence1"], r["status_sentence2"]) for r in rows] == [
        ("ok", "fallback" if i == 5 else "ok") for i in range(12)
    ]
    assert rows[5]["status"] == "fallback"


@pytest.mark.parametrize(
    ("output", "given_up"),
    [
        ("", True), ("  \n", True), ("N/A", True), (" None ", True), ("[TEXT]", True),
        ("...", True), ("\u2026", True), ("\u00b7 \u2022", True), ("(?!)", True),
        ("\u2014", False), ("\u201c\u201d", False), ("$%", False), ("{}", False),
        ("n/a.", False), ("A man.", False),
    ],
)  # fmt: skip
def test_the_outputs_htebs_generator_refuses_are_those_given_up(output, given_up):
    """HTEB's generator refuses a blank output, its placeholders in any case and an output
    of its own list of marks alone; a dash, curly quotes, "$" or "{}" are text to it."""
    from shiftbench.core.data.hteb import gave_up

    assert gave_up(output, "ok") is given_up
    assert gave_up(output, "truncated") and gave_up(output, "fallback")
    assert gave_up(output, "wrong-language") is given_up  # a check HTEB does not make


def test_the_run_folders_readme_and_the_dataset_card_say_each_text_has_its_status(
    shared_data, scripted, invoke, tmp_path
):
    """A user reading the run folder's README or the dataset card learns what the
    `status_<field>` columns the card's features list are."""
    run = tmp_path / "run"
    _generated(invoke, scripted, shared_data, run)
    readme = (run / "README.md").read_text(encoding="utf-8")
    assert (
        "or a reason code; each rewritten field has its own as `status_<field>` (which text "
        "failed, and why), and the row's `status` is its first failure." in readme
    )
    card = tmp_path / "card.md"
    assert invoke("card", run, "-o", card).exit_code == 0
    text = card.read_text(encoding="utf-8")
    assert "- name: status_sentence1" in text  # the card's features, from loading the config
    assert (
        "each rewritten field has its own status as `status_<field>` (one per text of a "
        "list; in a run made before shiftbench kept them, the row's `status` stands for "
        "every text), so a row says which of its texts failed and why, and the row's "
        "`status` names its first failure." in " ".join(text.split())
    )
