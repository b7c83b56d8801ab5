"""A run folder as mteb tasks: mteb.evaluate on them gives evaluate's main scores."""

from __future__ import annotations

import pytest
from support.mteb_tasks import ours, theirs

import shiftbench


@pytest.mark.parametrize(
    ("source", "extra"),
    [
        ("STSBenchmark", ["--limit", "40"]),
        ("MRPC", ["--task-type", "PairClassification", "--limit", "40"]),
        # with test_evaluate's tests of the same data, for the embeddings they share
        pytest.param(
            "XQuADRetrieval", ["--subset", "en", "--split", "test", "--limit", "40"],
            marks=pytest.mark.xdist_group("xquad"),
        ),
        pytest.param(
            "Banking77Classification", ["--limit", "160"],
            marks=pytest.mark.xdist_group("banking77"),
        ),
        ("MasakhaNEWSClusteringS2S", ["--subset", "hau", "--limit", "60"]),
    ],
)  # fmt: skip
def test_mteb_scores_the_tasks_as_evaluate_does(
    scripted, shared_data, invoke, tmp_path, embedding_store, mteb_model, source, extra
):
    run = tmp_path / "run"
    where = shared_data / source
    args = [source, "--data-dir", where] if source != "MRPC" else [where]
    result = invoke(
        "gen", *args, *extra, "-t", "paraphrase,backtranslation", "-s", "1",
        "-b", "scripted", "-q", "-o", run, "--max-failure-rate", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data_dir = str(where) if source == "XQuADRetrieval" else None
    tasks = shiftbench.mteb_tasks(run, data_dir=data_dir)
    context = ["--data-dir", data_dir] if data_dir else []
    expected = ours(invoke, run, tmp_path, embedding_store, *context)
    assert [t.metadata.name.split(".", 1)[1] for t in tasks] == list(expected)
    got = theirs(mteb_model, tasks)
    assert sorted(got) == sorted(expected)
    for config, value in expected.items():
        assert got[config] == pytest.approx(value, abs=1e-4), config


@pytest.mark.xdist_group("xquad")
def test_mteb_reranks_as_evaluate_does(
    scripted, shared_data, invoke, tmp_path, embedding_store, mteb_model
):
    """Reranking (the XQuAD fixture of test_evaluate: ten candidates per query) with the
    corpus rewritten too: mteb ranks each query's candidates that the rewritten corpus
    kept, as evaluate does, and the scores agree."""
    from support.evaluate import _candidates, _card, _jsonl, _ranking_tables

    corpus, queries, qrels, relevant = _ranking_tables(shared_data / "XQuADRetrieval" / "en", 40)
    ranked = _candidates(corpus, queries, relevant)
    keep = {d for r in ranked for d in r["corpus-ids"]}
    folder = tmp_path / "rerank"
    tables = {
        "corpus": [d for d in corpus if d["id"] in keep],
        "queries": queries,
        "qrels": qrels,
        "top_ranked": ranked,
    }
    for name, rows in tables.items():
        _jsonl(folder / f"{name}.jsonl", rows)
    _card(folder, {n: f"{n}.jsonl" for n in tables})
    run = tmp_path / "run"
    result = invoke(
        "gen", folder, "--task-type", "Reranking", "-t", "paraphrase,backtranslation", "-s", "1",
        "--rewrite", "queries,corpus", "-b", "scripted", "-q", "-o", run,
        "--max-failure-rate", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    tasks = shiftbench.mteb_tasks(run, data_dir=str(folder))
    assert all(t.dataset["default"]["test"]["top_ranked"] for t in tasks)
    expected = ours(invoke, run, tmp_path, embedding_store, "--data-dir", str(folder))
    got = theirs(mteb_model, tasks, source="rerank")
    assert sorted(got) == sorted(expected) and len(expected) == 3
    for config, value in expected.items():
        assert got[config] == pytest.approx(value, abs=1e-4), config
