"""The leaderboard page's HTML, from a summary and results written by hand: names escaped,
ranks and ties as the summary gives them, equal inputs giving equal bytes."""

from __future__ import annotations

import html
import re

from shiftbench.evaluate.leaderboard import page

HOSTILE = '<img src=x onerror="alert(1)">'


def figure(delta: float, low: float, high: float, rank: list[int]) -> dict:
    return {"score": 0.5 + delta, "delta": delta, "ci95": [low, high], "rank": rank}


def inputs() -> tuple[dict, list[dict]]:
    models = {
        "org/steady": {"datasets": 1, "original": 0.8, "transforms": {},
                       "axes": {"Length": figure(-0.05, -0.08, -0.02, [1, 1])},
                       "total": figure(-0.05, -0.08, -0.02, [1, 1])},
        HOSTILE: {"datasets": 1, "original": 0.7, "transforms": {},
                  "axes": {"Length": figure(-0.20, -0.30, -0.12, [2, 3])},
                  "total": figure(-0.20, -0.30, -0.12, [2, 3])},
        "org/shaky": {"datasets": 1, "original": 0.6, "transforms": {},
                      "axes": {"Length": figure(-0.25, -0.40, -0.15, [2, 3])},
                      "total": figure(-0.25, -0.40, -0.15, [2, 3])},
    }  # fmt: skip
    summary = {"datasets": ["STSBenchmark"], "interval": "percentile",
               "aggregation": "per-dataset", "models": models}  # fmt: skip
    record = {"config": "summarisation-s1", "kind": "transform", "subset": "default",
              "split": "test", "transform": "summarisation", "seed": 1, "rows": 40,
              "scores": {}, "main_score": 0.5, "original_same_rows": 0.7, "delta": -0.2,
              "ci95": [-0.3, -0.12]}  # fmt: skip
    document = {
        "shiftbench_version": "0.1.0", "target": "run", "task_type": "STS",
        "main_score": "cosine_spearman",
        "source": {"name": "STSBenchmark", "task_type": "STS", "main_score": "cosine_spearman",
                   "release": {"repo": "org/stsb", "tag": "v1.0.0", "commit": "0" * 40}},
        "models": [{"model": {"id": name}, "results": [record]} for name in models],
    }  # fmt: skip
    return summary, [document]


def test_names_are_escaped_and_no_input_becomes_markup():
    summary, documents = inputs()
    text = page(summary, documents)  # type: ignore[arg-type]
    assert HOSTILE not in text
    assert html.escape(HOSTILE, quote=True) in text
    # the only script is the page's own sorting script, the only image none
    assert text.count("<script>") == 1 and "<img" not in text


def test_ranks_and_ties_are_the_summarys():
    summary, documents = inputs()
    text = page(summary, documents)  # type: ignore[arg-type]
    rows = re.findall(r'<tr( class="tied")? data-model="([^"]*)">.*?</tr>', text)
    assert [(bool(tied), html.unescape(name)) for tied, name in rows] == [
        (False, "org/steady"), (True, HOSTILE), (True, "org/shaky"),
    ]  # fmt: skip
    assert text.count("2\u20133</td>") == 2 and '<span class="badge">tied</span>' in text
    assert 'href="https://huggingface.co/datasets/org/stsb/blob/v1.0.0/README.md"' in text


def test_results_scored_as_hteb_scores_show_as_hteb_prints_them():
    """Under HTEB's aggregation every score, drop and interval is x100 with two decimals
    (org/steady: original 0.8, total drop -0.05 [-0.08, -0.02]); otherwise fractions."""
    summary, documents = inputs()
    text = page(summary, documents)  # type: ignore[arg-type]
    row = re.search(r'<tr data-model="org/steady">.*?</tr>', text).group(0)  # type: ignore[union-attr]
    assert '<td data-sort="0.8">0.8000</td>' in row
    # decimals to the interval's width (0.06: two places)
    assert '-0.050<span class="ci">[-0.080, -0.020]</span>' in row
    summary["aggregation"] = "transformations-first"
    for doc in documents:
        doc["protocol"] = {"name": "hteb"}
    text = page(summary, documents)  # type: ignore[arg-type]
    row = re.search(r'<tr data-model="org/steady">.*?</tr>', text).group(0)  # type: ignore[union-attr]
    assert '<td data-sort="0.8">80.00</td>' in row  # sorting keeps the raw figure
    assert '-5.00<span class="ci">[-8.00, -2.00]</span>' in row
    assert "x100 with two decimals, as HTEB prints them" in text
    assert '<td data-sort="0.5">50.00</td>' in text  # the drill-down's variant score


def test_equal_inputs_give_equal_bytes():
    assert page(*inputs()) == page(*inputs())  # type: ignore[arg-type]


def test_a_report_folder_gives_the_page_of_its_summary(tmp_path):
    import json

    import pytest

    from shiftbench.errors import InputError
    from shiftbench.evaluate.leaderboard import write_leaderboard

    summary, _ = inputs()
    summary["units"] = [
        {"model": "org/steady", "dataset": "STSBenchmark", "subset": "default",
         "task_type": "STS", "original": 0.8,
         "transforms": {"summarisation": {"seeds": 3, "score": 0.75, "delta": -0.05,
                                          "ci95": [-0.08, -0.02]}}},
    ]  # fmt: skip
    report = tmp_path / "report"
    report.mkdir()
    (report / "summary.json").write_text(json.dumps(summary))
    written = write_leaderboard([report], tmp_path / "board")
    text = written.read_text()
    assert '<td data-sort="3">3 seeds</td>' in text
    assert "protocol as the report recorded" in text
    results = tmp_path / "results"
    results.mkdir()
    with pytest.raises(InputError) as refused:
        write_leaderboard([report, results], tmp_path / "other")
    assert str(refused.value) == (
        f"{report} is a report folder, which stands alone: give one report folder, or "
        "evaluate results folders"
    )
    assert not (tmp_path / "other").exists()


def test_a_folder_the_page_cannot_read_is_refused_in_one_line(tmp_path):
    """A run folder is not a results folder; a results.json a newer shiftbench wrote may
    hold what this one cannot read: each refused naming the file, and nothing written."""
    import json

    import pytest

    from shiftbench.errors import InputError
    from shiftbench.evaluate.leaderboard import write_leaderboard

    run = tmp_path / "run"
    run.mkdir()
    (run / "shiftbench.json").write_text("{}")
    newer = tmp_path / "results"
    newer.mkdir()
    _, documents = inputs()
    (newer / "results.json").write_text(json.dumps({**documents[0], "shiftbench_version": "9.2.0"}))
    for folder, message in (
        (run, f"{run} is not an evaluate results folder (no results.json)"),
        (newer, f"{newer / 'results.json'} was written by shiftbench 9.2.0, newer than this "
                "one (0.1.0); read it with shiftbench 9.2.0 or later"),
    ):  # fmt: skip
        with pytest.raises(InputError) as refused:
            write_leaderboard([folder], tmp_path / "board")
        assert str(refused.value) == message
    assert not (tmp_path / "board").exists()
