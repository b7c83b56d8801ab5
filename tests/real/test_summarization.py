"""Summarization: machine summaries rewritten by gen, scored by evaluate as mteb scores them.

The data is a small folder laid out as the Hub's mteb/summeval (one default config, a test
split, mteb's column names), with texts written for these tests: four documents, two human
summaries and four machine summaries each, relevance on SummEval's 1-5 scale. The last
document's summaries are all rated alike, so mteb (and shiftbench) skip it.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest
from scipy.stats import spearmanr
from support.environment import ENCODER
from support.files import read_rows
from support.summarization import DOCUMENTS


def _results(out: Path) -> list[dict]:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]


def test_scores_equal_mteb_to_1e6(summeval_dir, invoke, tmp_path):
    """The MTEB task with --data-dir and the folder with --task-type both give mteb's own
    figures (its v2 evaluator run on the same data with the same encoder)."""
    import mteb

    from shiftbench.core.models.encoders import resolve_encoder

    task = mteb.get_task("SummEvalSummarization.v2")
    task.dataset = datasets.load_dataset(str(summeval_dir))
    task.data_loaded = True
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    run = mteb.evaluate(model, task, cache=None, overwrite_strategy="always")
    theirs = run.task_results[0].scores["test"][0]
    for number, source in enumerate(
        (
            ["SummEvalSummarization.v2", "--data-dir", summeval_dir],
            [summeval_dir, "--task-type", "Summarization"],
        )
    ):
        out = tmp_path / f"results-{number}"  # one results folder holds one source
        result = invoke("evaluate", *source, "-m", ENCODER, "-o", out, "--no-plots")
        assert result.exit_code == 0, result.output
        (ours,) = _results(out)
        assert ours["rows"] == 4
        metrics = ["pearson", "spearman", "cosine_spearman", "cosine_pearson"]
        assert sorted(ours["scores"]) == sorted([*metrics, "dot_spearman", "dot_pearson"])
        for metric, value in ours["scores"].items():
            assert value == pytest.approx(theirs[metric], abs=1e-6), metric
        assert ours["main_score"] == pytest.approx(theirs["main_score"], abs=1e-6)


def _per_document(machine: list[list[str]], docs: list[dict], model) -> np.ndarray:
    """Each document's Spearman(relevance, best cosine to a human summary) in float64,
    NaN where the relevance or the predictions are all equal."""
    found = []
    for summaries, doc in zip(machine, docs, strict=True):
        m = model.encode(summaries).astype(np.float64)
        h = model.encode(doc["human_summaries"]).astype(np.float64)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        h /= np.linalg.norm(h, axis=1, keepdims=True)
        best = (m @ h.T).max(axis=1)
        constant = len(set(doc["relevance"])) == 1 or len(set(best.round(12))) == 1
        found.append(np.nan if constant else spearmanr(doc["relevance"], best).statistic)
    return np.asarray(found)


def test_evaluate_scores_rewritten_summaries_against_original_human_scores(
    summ_run, invoke, tmp_path
):
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    out = tmp_path / "results"
    result = invoke("evaluate", summ_run, "-m", ENCODER, "-o", out, "--no-plots")
    assert result.exit_code == 0, result.output
    original, variant = _results(out)
    assert (original["config"], variant["config"]) == ("original", "paraphrase-s1")
    assert (variant["rows"], variant["rows_total"]) == (3, 4)
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    machine = [d["machine_summaries"] for d in DOCUMENTS]
    before = _per_document(machine, DOCUMENTS, model)
    # the variant's summaries against the original human summaries and relevance; the
    # third document's row failed (one empty summary), so it is left out on both sides
    after = _per_document([[f"REWRITTEN {t}" for t in m] for m in machine], DOCUMENTS, model)
    after[2] = np.nan
    assert np.isnan(before[3]) and np.isfinite(before[:3]).all()
    assert original["main_score"] == pytest.approx(np.nanmean(before), abs=1e-6)
    assert variant["main_score"] == pytest.approx(np.nanmean(after), abs=1e-6)
    same = np.nanmean(before[[0, 1]])
    assert variant["original_same_rows"] == pytest.approx(same, abs=1e-6)
    assert variant["delta"] == pytest.approx(np.nanmean(after) - same, abs=1e-6)
    # the paired bootstrap: documents drawn with replacement (seed 0), each draw's mean
    # over its scored documents, variant minus original
    drawn = np.random.default_rng(0).integers(0, 4, size=(1000, 4))
    deltas = []
    for draw in drawn:
        scored = [i for i in draw if np.isfinite(after[i])]
        deltas.append(np.mean(after[scored]) - np.mean(before[scored]) if scored else np.nan)
    deltas = np.asarray(deltas)
    replicates = np.asarray([np.nan if v is None else v for v in variant["delta_replicates"]])
    assert np.isnan(replicates).tolist() == np.isnan(deltas).tolist()
    assert np.nanmax(np.abs(replicates - deltas)) < 1e-5
    finite = deltas[np.isfinite(deltas)]
    assert variant["ci95"] == pytest.approx(np.percentile(finite, [2.5, 97.5]).tolist(), abs=1e-5)
    assert variant["self_retrieval"]["pairs"] == 12


def test_references_rewrites_the_human_summaries_too(scripted, summeval_dir, invoke, tmp_path):
    """--rewrite queries,references (HTEB's parts for summarisation) rewrites each human
    summary as well; evaluate scores the rewritten machine summaries against the rewritten
    human summaries, with the original relevance scores."""
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    out = tmp_path / "run"
    result = invoke(
        "gen", "SummEvalSummarization.v2", "--data-dir", summeval_dir, "-t", "paraphrase",
        "-s", "1", "-b", "scripted", "-q", "-o", out, "--no-cache", "--protocol", "hteb",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["rewrite"] == ["queries", "references"]
    assert meta["source"]["text_fields"] == ["machine_summaries", "human_summaries"]
    rows = read_rows(out / "paraphrase-s1" / "test.jsonl")
    for row, doc in zip(rows, DOCUMENTS, strict=True):
        assert row["original_human_summaries"] == doc["human_summaries"]
        assert row["human_summaries"] == [f"REWRITTEN {t}" for t in doc["human_summaries"]]
        assert row["status_human_summaries"] == ["ok"] * len(doc["human_summaries"])
        assert row["text"] == doc["text"]  # the document is never embedded, nor rewritten

    results = tmp_path / "results"
    result = invoke("evaluate", out, "-m", ENCODER, "-o", results, "--no-plots")
    assert result.exit_code == 0, result.output
    original, variant = _results(results)
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    rewritten = [
        {**d, "human_summaries": [f"REWRITTEN {t}" for t in d["human_summaries"]]}
        for d in DOCUMENTS
    ]
    machine = [[f"REWRITTEN {t}" for t in d["machine_summaries"]] for d in DOCUMENTS]
    after = _per_document(machine, rewritten, model)
    assert variant["rows"] == 4
    # the run folder's protocol (hteb) scores it: HTEB's pooled Spearman is the main score,
    # mteb's mean per document beside it
    assert variant["main_score"] == pytest.approx(_pooled(machine, rewritten, model), abs=1e-6)
    assert variant["scores"]["cosine_spearman"] == pytest.approx(np.nanmean(after), abs=1e-6)
    originals = [d["machine_summaries"] for d in DOCUMENTS]
    before = _per_document(originals, DOCUMENTS, model)
    assert original["main_score"] == pytest.approx(_pooled(originals, DOCUMENTS, model), abs=1e-6)
    assert original["scores"]["cosine_spearman"] == pytest.approx(np.nanmean(before), abs=1e-6)


@pytest.mark.parametrize("protocol", ["shiftbench", "hteb"])
def test_mteb_scores_the_run_as_tasks_as_evaluate_does(
    scripted, summeval_dir, invoke, tmp_path, protocol, embedding_store, mteb_model
):
    """shiftbench.mteb_tasks on a summarisation run, machine summaries rewritten (and, under
    hteb, the human summaries too): mteb's own evaluator gives evaluate's main scores."""
    from support.mteb_tasks import ours, theirs

    import shiftbench

    run = tmp_path / "run"
    result = invoke(
        "gen", "SummEvalSummarization.v2", "--data-dir", summeval_dir, "-t", "paraphrase",
        "-s", "1", "-b", "scripted", "-q", "-o", run, "--no-cache", "--protocol", protocol,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    tasks = shiftbench.mteb_tasks(run)
    # mteb's tasks score with mteb's metric (the mean per document), evaluate's under the
    # shiftbench protocol; --protocol hteb's main score is HTEB's pooled Spearman instead
    expected = ours(invoke, run, tmp_path, embedding_store, "--protocol", "shiftbench")
    assert [t.metadata.name for t in tasks] == [
        "SummEvalSummarization.v2.original",
        "SummEvalSummarization.v2.paraphrase-s1",
    ]
    got = theirs(mteb_model, tasks, "SummEvalSummarization.v2")
    assert sorted(got) == sorted(expected) == ["original", "paraphrase-s1"]
    if protocol == "shiftbench":  # (rank correlations of four documents can tie)
        assert got["original"] != pytest.approx(got["paraphrase-s1"], abs=1e-3)
    for config, value in expected.items():
        assert got[config] == pytest.approx(value, abs=1e-4), config


def _pooled(machine: list[list[str]], docs: list[dict], model) -> float:
    """HTEB's figure by hand: one Spearman over every machine summary of every document,
    each predicted by its best float64 cosine to its document's human summaries."""
    gold, best = [], []
    for summaries, doc in zip(machine, docs, strict=True):
        m = model.encode(summaries).astype(np.float64)
        h = model.encode(doc["human_summaries"]).astype(np.float64)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        h /= np.linalg.norm(h, axis=1, keepdims=True)
        best += list((m @ h.T).max(axis=1))
        gold += list(doc["relevance"])
    return float(spearmanr(gold, best).statistic)


def test_hteb_scores_summaries_with_one_pooled_spearman(summ_run, invoke, tmp_path):
    """Under --protocol hteb the main score is HTEB's: one Spearman pooled over all 16
    machine summaries (the document mteb skips included), the failed summary scored as
    its original text; mteb's per-document mean stays among the metrics."""
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    out = tmp_path / "results"
    args = ["-m", ENCODER, "-o", out, "--no-plots", "--protocol", "hteb"]
    result = invoke("evaluate", summ_run, *args)
    assert result.exit_code == 0, result.output
    original, variant = _results(out)
    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    machine = [d["machine_summaries"] for d in DOCUMENTS]
    rewritten = [[f"REWRITTEN {t}" for t in m] for m in machine]
    rewritten[2][2] = machine[2][2]  # the empty rewrite, put back
    before, after = _pooled(machine, DOCUMENTS, model), _pooled(rewritten, DOCUMENTS, model)
    assert (variant["rows"], variant["restored"]) == (4, {"rows": 1, "texts": 1,
                                                          "kept_as_written": 0})  # fmt: skip
    assert original["main_score"] == pytest.approx(before, abs=1e-6)
    assert variant["main_score"] == pytest.approx(after, abs=1e-6)
    assert variant["delta"] == pytest.approx(after - before, abs=1e-6)
    assert variant["scores"]["pooled_cosine_spearman"] == variant["main_score"]
    per_document = _per_document(rewritten, DOCUMENTS, model)
    assert variant["scores"]["cosine_spearman"] == pytest.approx(np.nanmean(per_document), abs=1e-6)
    low, high = variant["ci95"]
    assert low <= variant["delta"] <= high
