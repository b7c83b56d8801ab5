"""gen --rewrite: a ranking corpus and a Classification train split rewritten, and scored."""

from __future__ import annotations

import json

import datasets
import pytest
from support.environment import ENCODER
from support.files import read_rows
from support.rewrite_parts import LIMIT

from shiftbench.core.models.encoders import Encoder


def _ndcg(encoder: Encoder, queries: list[dict], documents: list[dict], qrels: dict) -> float:
    from shiftbench.evaluate.evaluators.retrieval import document_text, rank, retrieval_metrics

    ranking = rank(
        encoder.model.similarity,
        encoder.embed([q["text"] for q in queries], ""),
        [q["id"] for q in queries],
        encoder.embed([document_text(d) for d in documents], ""),
        [d["id"] for d in documents],
    )
    return retrieval_metrics(ranking, {q["id"]: qrels[q["id"]] for q in queries})["ndcg_at_10"]


def test_four_combinations_equal_a_computation_by_hand(corpus_run, invoke, tmp_path):
    """evaluate needs no --data-dir; original, query-side, corpus-side and both-sides
    equal the retrieval functions run on the folder's texts, every combination on the
    queries and documents whose rewrites are usable; the report's 2x2 table shows them."""
    out = tmp_path / "results"
    result = invoke("evaluate", corpus_run, "-m", ENCODER, "-o", out)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    records = doc["models"][0]["results"]
    assert [(r["config"], r["rewritten"], r.get("partial", False)) for r in records] == [
        ("original.en", [], False),
        ("paraphrase-s1.en", ["queries", "corpus"], False),
        ("paraphrase-s1.en", ["queries"], True),
        ("paraphrase-s1.en", ["corpus"], True),
    ]
    original, both, query_side, corpus_side = records

    from shiftbench.evaluate.evaluators.retrieval import judgements

    qrels = judgements(read_rows(corpus_run / "original.en" / "qrels.test.jsonl"))
    new_queries = read_rows(corpus_run / "paraphrase-s1.en" / "test.jsonl")
    new_docs = read_rows(corpus_run / "paraphrase-s1.en" / "corpus.test.jsonl")
    ok_ids = {r["id"] for r in new_queries if r["status"] == "ok"}
    ok_docs = {r["id"] for r in new_docs if r["status"] == "ok"}
    old_queries = [
        q for q in read_rows(corpus_run / "original.en" / "test.jsonl") if q["id"] in ok_ids
    ]
    old_docs = read_rows(corpus_run / "original.en" / "corpus.test.jsonl")
    new_queries = [q for q in new_queries if q["id"] in ok_ids]
    new_docs = [d for d in new_docs if d["id"] in ok_docs]
    encoder = Encoder(ENCODER)
    expected = {
        "original": _ndcg(encoder, old_queries, [d for d in old_docs if d["id"] in ok_docs], qrels),
        "query": _ndcg(encoder, new_queries, [d for d in old_docs if d["id"] in ok_docs], qrels),
        "corpus": _ndcg(encoder, old_queries, new_docs, qrels),
        "both": _ndcg(encoder, new_queries, new_docs, qrels),
    }
    assert original["rows"] == LIMIT
    assert original["main_score"] == pytest.approx(
        _ndcg(encoder, read_rows(corpus_run / "original.en" / "test.jsonl"), old_docs, qrels),
        abs=1e-9,
    )
    for record in (both, query_side, corpus_side):
        assert record["rows"] == LIMIT - 1
        assert record["original_same_rows"] == pytest.approx(expected["original"], abs=1e-9)
        assert record["delta"] == record["main_score"] - record["original_same_rows"]
    assert both["main_score"] == pytest.approx(expected["both"], abs=1e-9)
    assert query_side["main_score"] == pytest.approx(expected["query"], abs=1e-9)
    assert corpus_side["main_score"] == pytest.approx(expected["corpus"], abs=1e-9)
    assert len({round(v, 6) for v in expected.values()}) == 4  # four different figures

    report = (out / "report.md").read_text(encoding="utf-8")
    same = both["original_same_rows"]
    table = "\n".join(
        [
            "| model | transform | queries | corpus original | corpus rewritten |",
            "| --- | --- | --- | ---: | ---: |",
            f"| {ENCODER} | paraphrase | original | {same:.4f} | "
            f"{corpus_side['main_score']:.4f} ({corpus_side['delta']:+.4f}) |",
            f"| {ENCODER} | paraphrase | rewritten | "
            f"{query_side['main_score']:.4f} ({query_side['delta']:+.4f}) | "
            f"{both['main_score']:.4f} ({both['delta']:+.4f}) |",
        ]
    )
    assert "## Query-side and corpus-side shift\n\n" in report
    assert table in report
    # the axis figures are the variant as generated (both sides rewritten)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    (unit,) = summary["units"]
    assert unit["transforms"]["paraphrase"]["score"] == both["main_score"]
    assert f"| {ENCODER} | paraphrase-s1.en [corpus rewritten] | test | 29 |" in report
    # the mteb-layout file of the variant holds its own record only
    (layout,) = (out / ENCODER.replace("/", "__")).glob("*/XQuADRetrieval.paraphrase-s1.en.json")
    document = json.loads(layout.read_text(encoding="utf-8"))
    assert document["task_name"] == "XQuADRetrieval.paraphrase-s1.en"
    scores = document["scores"]["test"]
    assert [s["main_score"] for s in scores] == [both["main_score"]]


def test_faithful_on_a_rewritten_corpus_keeps_its_certified_documents(
    corpus_run, judgebot, invoke, tmp_path
):
    """--faithful scores the both-sides variant on its certified queries against its
    certified documents, and the original on the same queries and documents: a document
    rewrite the judge does not certify is left out of both corpora, as a failed one is."""
    from support.judge_backend import similarity

    from shiftbench.evaluate.evaluators.retrieval import judgements

    done = invoke("validate", corpus_run, "--judge", "judgebot", "-q")
    assert done.exit_code == 0, done.output
    variant = corpus_run / "paraphrase-s1.en"
    queries = read_rows(variant / "test.jsonl")
    docs = read_rows(variant / "corpus.test.jsonl")
    rated = sorted(similarity(d["original_text"], d["text"]) for d in docs if d["status"] == "ok")
    threshold = rated[len(rated) // 2]  # about half the documents pass

    def trusted(rows):
        return [
            r for r in rows
            if r["status"] == "ok" and similarity(r["original_text"], r["text"]) >= threshold
        ]  # fmt: skip

    new_queries, new_docs = trusted(queries), trusted(docs)
    assert 0 < len(new_docs) < len(docs) - 1
    assert new_queries
    out = tmp_path / "results"
    result = invoke(
        "evaluate", corpus_run, "-m", ENCODER, "--faithful", f"judge>={threshold}", "-o", out,
        "--no-plots",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    both = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0]["results"][1]
    assert both["rewritten"] == ["queries", "corpus"]
    figures = both["faithful"]
    assert figures["rows"] == len(new_queries)
    assert figures["context_rows"] == {"corpus/test": len(new_docs)}

    qrels = judgements(read_rows(corpus_run / "original.en" / "qrels.test.jsonl"))
    ids = {q["id"] for q in new_queries}
    kept = {d["id"] for d in new_docs}
    original = corpus_run / "original.en"
    old_queries = [q for q in read_rows(original / "test.jsonl") if q["id"] in ids]
    old_docs = [d for d in read_rows(original / "corpus.test.jsonl") if d["id"] in kept]
    encoder = Encoder(ENCODER)
    assert figures["main_score"] == pytest.approx(
        _ndcg(encoder, new_queries, new_docs, qrels), abs=1e-9
    )
    assert figures["original_same_rows"] == pytest.approx(
        _ndcg(encoder, old_queries, old_docs, qrels), abs=1e-9
    )


def test_a_rewritten_train_split_trains_the_variant_classifiers(
    scripted, shared_data, invoke, tmp_path
):
    """Banking77: the variant is scored with classifiers fitted on its rewritten train
    split; its score equals evaluating a plain local folder whose texts are the rewrites,
    and its paired original is the original's score (every rewrite usable)."""
    run = tmp_path / "run"
    data = shared_data / "Banking77Classification"
    args = ["--data-dir", data, "--limit", "300", "-t", "paraphrase", "-s", "1", "-q"]
    result = invoke(
        "gen", "Banking77Classification", *args, "-b", "scripted", "--rewrite", "queries,train",
        "-o", run,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for config in ("original", "paraphrase-s1"):
        loaded = datasets.load_dataset(str(run), config)
        assert {s: ds.num_rows for s, ds in loaded.items()} == {"test": 300, "train": 300}
    train = read_rows(run / "paraphrase-s1" / "train.jsonl")
    assert {r["status"] for r in train} == {"ok"}
    assert all(r["text"] == f"REWRITTEN {r['original_text'].strip()}" for r in train)

    out = tmp_path / "results"
    assert invoke("evaluate", run, "-m", ENCODER, "-o", out, "-q").exit_code == 0
    original, variant = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    assert (original["rewritten"], variant["rewritten"]) == ([], ["queries", "train"])
    assert variant["original_same_rows"] == original["main_score"]

    plain = tmp_path / "plain"
    (plain / "data").mkdir(parents=True)
    for split in ("train", "test"):
        rows = read_rows(run / "paraphrase-s1" / f"{split}.jsonl")
        lines = [json.dumps({"text": r["text"], "label": r["label"]}) for r in rows]
        (plain / "data" / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (plain / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: "
        "data/train.jsonl\n  - split: test\n    path: data/test.jsonl\n---\n",
        encoding="utf-8",
    )
    by_hand = tmp_path / "by-hand"
    result = invoke(
        "evaluate", plain, "--task-type", "Classification", "-m", ENCODER, "-o", by_hand, "-q"
    )
    assert result.exit_code == 0, result.output
    (expected,) = json.loads((by_hand / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    assert variant["main_score"] == expected["main_score"] != original["main_score"]
