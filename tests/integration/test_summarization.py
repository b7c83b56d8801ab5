"""Summarization: machine summaries rewritten by gen, scored by evaluate as mteb scores them.

The data is a small folder laid out as the Hub's mteb/summeval (one default config, a test
split, mteb's column names), with texts written for these tests: four documents, two human
summaries and four machine summaries each, relevance on SummEval's 1-5 scale. The last
document's summaries are all rated alike, so mteb (and shiftbench) skip it.
"""

from __future__ import annotations

import json

import datasets
import pytest
from support.files import read_rows
from support.summarization import DOCUMENTS, SHARED


def test_superseded_summeval_is_refused_before_loading_a_model(summeval_dir, invoke, tmp_path):
    out = tmp_path / "results"
    result = invoke(
        "evaluate", "SummEval", "--data-dir", summeval_dir, "-m", "no/such-model", "-o", out
    )
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "Error: SummEval is scored with mteb's superseded summarisation metric; "
        "evaluate SummEvalSummarization.v2 (the same data) instead\n"
    )
    assert not out.exists()


def test_gen_rewrites_each_machine_summary(summ_run, scripted):
    rows = read_rows(summ_run / "paraphrase-s1" / "test.jsonl")
    assert [r["row_id"] for r in rows] == [0, 1, 2, 3]
    for row, doc in zip(rows, DOCUMENTS, strict=True):
        assert row["original_machine_summaries"] == doc["machine_summaries"]
        assert row["text"] == doc["text"]
        assert row["human_summaries"] == doc["human_summaries"]
        assert row["relevance"] == doc["relevance"]
        assert "original_text" not in row and "original_human_summaries" not in row
    first = rows[0]
    assert first["machine_summaries"] == [
        f"REWRITTEN {t}" for t in DOCUMENTS[0]["machine_summaries"]
    ]
    assert first["status_machine_summaries"] == ["ok"] * 4
    assert first["language_machine_summaries"] == ["en"] * 4
    assert first["status"] == "ok"
    third = rows[2]
    assert third["machine_summaries"][2] == ""  # a failed summary is never the original
    assert third["status_machine_summaries"] == ["ok", "ok", "empty", "ok"]
    assert third["status"] == "empty"
    assert [r["status"] for r in rows] == ["ok", "ok", "empty", "ok"]
    # the summary two documents share is sent once; every other text once per attempt
    sent = [t for call in scripted.calls for t in call]
    assert sent.count(SHARED) == 1
    unique = {t for d in DOCUMENTS for t in d["machine_summaries"]}
    assert unique == set(sent)
    meta = json.loads((summ_run / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["configs"]["paraphrase-s1"]["status_counts"] == {"test": {"empty": 1, "ok": 3}}
    assert meta["source"]["text_fields"] == ["machine_summaries"]
    assert datasets.load_dataset(str(summ_run), "paraphrase-s1", split="test").num_rows == 4


@pytest.mark.parametrize(
    ("command", "options"),
    [
        (["validate"], []),
        (["human-eval", "batch"], ["-o", "batch"]),
        (["probe"], ["-m", "no/such-model", "-o", "probes"]),
    ],
)
def test_stages_reading_one_text_per_field_refuse_a_summarization_run(
    summ_run, invoke, tmp_path, command, options
):
    before = sorted(p.relative_to(summ_run) for p in summ_run.rglob("*"))
    outputs = [str(tmp_path / o) if o in ("batch", "probes") else o for o in options]
    result = invoke(*command, summ_run, *outputs)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"Error: {command[0]} does not handle Summarization runs yet: each row's "
        "machine_summaries is a list of texts\n"
    )
    assert sorted(p.relative_to(summ_run) for p in summ_run.rglob("*")) == before
    assert not (tmp_path / "batch").exists() and not (tmp_path / "probes").exists()


def test_run_plan_counts_each_machine_summary_once(summeval_dir, invoke, tmp_path):
    """15 unique texts: 16 machine summaries, one of them in two documents; the document,
    the human summaries are not sent."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "output: out\nsources:\n  - name: SummEvalSummarization.v2\n"
        f"    data_dir: {summeval_dir}\ntransforms: [paraphrase]\nseeds: [1, 2]\n",
        encoding="utf-8",
    )
    result = invoke("run", spec, "--dry-run")
    assert result.exit_code == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("SummEval"))
    # configs, texts, calls: two configs, each sending the 15 unique texts once
    assert row.split()[:4] == ["SummEvalSummarization.v2", "2", "30", "30"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.yaml", "summeval"]


def test_references_is_a_summarization_part_only(scripted, shared_data, invoke, tmp_path):
    result = invoke("gen", "sample", "--rewrite", "queries,references", "-b", "scripted",
                    "-o", tmp_path / "run")  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --rewrite references: STS tasks have no references to rewrite; their parts: "
        "queries\n"
    )
    assert not (tmp_path / "run").exists()
