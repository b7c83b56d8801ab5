"""gen --rewrite: a ranking corpus and a Classification train split rewritten, and scored."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import datasets
import pytest
from conftest import read_rows

from shiftbench.core.models.encoders import Encoder

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
LIMIT = 30
FAILED_QUERY = 3  # the scripted backend answers these rows' texts with nothing
FAILED_DOCUMENT = 2


@pytest.fixture
def corpus_run(scripted, shared_data, invoke, tmp_path) -> Path:
    """XQuADRetrieval (en), its first 30 queries and the corpus they need, queries and
    documents alike cut to their first half; one query and one document come back empty."""
    data = shared_data / "XQuADRetrieval" / "en"
    queries = read_rows(data / "queries.jsonl")
    corpus = read_rows(data / "corpus.jsonl")
    failed = (queries[FAILED_QUERY]["text"], corpus[FAILED_DOCUMENT]["text"])
    scripted.script = {text.strip(): ["", "", ""] for text in failed}
    run = tmp_path / "run"
    result = invoke(
        "gen", "XQuADRetrieval", "--data-dir", shared_data / "XQuADRetrieval", "--subset", "en",
        "--split", "test", "--limit", LIMIT, "-t", "paraphrase", "-s", "1", "-b", "scripted",
        "-m", "halves", "--rewrite", "queries,corpus", "-q", "-o", run,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote original.en, paraphrase-s1.en to {run}\n"
    return run


def test_a_rewritten_corpus_run_is_self_contained_and_loads(corpus_run, shared_data, invoke):
    data = shared_data / "XQuADRetrieval" / "en"
    queries = read_rows(data / "queries.jsonl")[:LIMIT]
    kept = {q["id"] for q in queries}
    qrels = [r for r in read_rows(data / "qrels.jsonl") if r["query-id"] in kept]
    relevant = {r["corpus-id"] for r in qrels}
    corpus = [
        {"row_id": i, **d}
        for i, d in enumerate(read_rows(data / "corpus.jsonl"))
        if i < LIMIT or d["id"] in relevant
    ]
    sizes = {
        "original.en": LIMIT,
        "original-corpus.en": len(corpus),
        "original-qrels.en": len(qrels),
        "paraphrase-s1.en": LIMIT,
        "paraphrase-s1-corpus.en": len(corpus),
    }
    for config, size in sizes.items():
        loaded = datasets.load_dataset(str(corpus_run), config)
        assert {s: ds.num_rows for s, ds in loaded.items()} == {"test": size}
    assert read_rows(corpus_run / "original.en" / "corpus.test.jsonl") == corpus
    assert read_rows(corpus_run / "original.en" / "qrels.test.jsonl") == qrels

    rewritten = read_rows(corpus_run / "paraphrase-s1.en" / "corpus.test.jsonl")
    assert [r["id"] for r in rewritten] == [d["id"] for d in corpus]
    assert [r["original_text"] for r in rewritten] == [d["text"] for d in corpus]
    assert [r["status"] for r in rewritten] == [
        "empty" if d["row_id"] == FAILED_DOCUMENT else "ok" for d in corpus
    ]
    assert rewritten[FAILED_DOCUMENT]["text"] == ""
    words = corpus[0]["text"].split()
    assert rewritten[0]["text"] == " ".join(words[: len(words) // 2])
    assert {r["attempt"] for r in rewritten if r["status"] == "ok"} == {1}
    assert rewritten[0]["title"] == corpus[0]["title"]  # titles stay as they are

    meta = json.loads((corpus_run / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["rewrite"] == ["queries", "corpus"]
    # the dataset card loads every config, tables included, before it is written
    result = invoke("card", corpus_run)
    assert (result.exit_code, result.stdout) == (0, f"card: {corpus_run / 'README.md'}\n")
    assert meta["configs"]["paraphrase-s1.en"]["status_counts"] == {
        "corpus.test": {"empty": 1, "ok": len(corpus) - 1},
        "test": {"empty": 1, "ok": LIMIT - 1},
    }


def _ndcg(encoder: Encoder, queries: list[dict], documents: list[dict], qrels: dict) -> float:
    from shiftbench.evaluate.retrieval import document_text, rank, retrieval_metrics

    ranking = rank(
        encoder.model.similarity,
        encoder.embed([q["text"] for q in queries], ""),
        [q["id"] for q in queries],
        encoder.embed([document_text(d) for d in documents], ""),
        [d["id"] for d in documents],
    )
    return retrieval_metrics(ranking, {q["id"]: qrels[q["id"]] for q in queries})["ndcg_at_10"]


@pytest.mark.slow
def test_four_combinations_equal_a_computation_by_hand(corpus_run, invoke, tmp_path):
    """evaluate needs no --data-dir; original, query-side, corpus-side and both-sides
    equal the retrieval functions run on the folder's texts, every combination on the
    queries and documents whose rewrites are usable; the report's 2x2 table shows them."""
    out = tmp_path / "results"
    result = invoke("evaluate", corpus_run, "-m", MODEL, "-o", out)
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

    from shiftbench.evaluate.retrieval import judgements

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
    encoder = Encoder(MODEL)
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
            f"| {MODEL} | paraphrase | original | {same:.4f} | "
            f"{corpus_side['main_score']:.4f} ({corpus_side['delta']:+.4f}) |",
            f"| {MODEL} | paraphrase | rewritten | "
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
    assert f"| {MODEL} | paraphrase-s1.en [corpus rewritten] | test | 29 |" in report
    # the mteb-layout file of the variant holds its own record only
    (layout,) = (out / MODEL.replace("/", "__")).glob("*/XQuADRetrieval.paraphrase-s1.en.json")
    document = json.loads(layout.read_text(encoding="utf-8"))
    assert document["task_name"] == "XQuADRetrieval.paraphrase-s1.en"
    scores = document["scores"]["test"]
    assert [s["main_score"] for s in scores] == [both["main_score"]]


@pytest.mark.slow
def test_faithful_on_a_rewritten_corpus_keeps_its_certified_documents(
    corpus_run, judgebot, invoke, tmp_path
):
    """--faithful scores the both-sides variant on its certified queries against its
    certified documents, and the original on the same queries and documents: a document
    rewrite the judge does not certify is left out of both corpora, as a failed one is."""
    from support.judge_backend import similarity

    from shiftbench.evaluate.retrieval import judgements

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
        "evaluate", corpus_run, "-m", MODEL, "--faithful", f"judge>={threshold}", "-o", out,
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
    encoder = Encoder(MODEL)
    assert figures["main_score"] == pytest.approx(
        _ndcg(encoder, new_queries, new_docs, qrels), abs=1e-9
    )
    assert figures["original_same_rows"] == pytest.approx(
        _ndcg(encoder, old_queries, old_docs, qrels), abs=1e-9
    )


def test_a_variant_whose_corpus_rewrites_all_failed_is_refused(
    scripted, shared_data, invoke, tmp_path
):
    """No usable document is left to rank: evaluate names the config and its statuses, exits
    2 before loading a model, and writes nothing."""
    data = shared_data / "XQuADRetrieval" / "en"
    scripted.script = {d["text"].strip(): ["", "", ""] for d in read_rows(data / "corpus.jsonl")}
    run = tmp_path / "run"
    result = invoke(
        "gen", "XQuADRetrieval", "--data-dir", shared_data / "XQuADRetrieval", "--subset", "en",
        "--split", "test", "--limit", "2", "-t", "paraphrase", "-s", "1", "-b", "scripted",
        "--rewrite", "queries,corpus", "-q", "-o", run,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = tmp_path / "results"
    result = invoke("evaluate", run, "-m", "no/such-model", "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: run paraphrase-s1.en/corpus.test has no usable document to rank (empty 2); "
        "make it again, e.g. with a larger --max-new-tokens\n",
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("source", "parts", "message"),
    [
        ("sample", "queries,corpus", "--rewrite corpus: STS tasks have no corpus to rewrite; "
         "their parts: queries"),
        ("xquad", "queries,train", "--rewrite train: Retrieval tasks have no train to "
         "rewrite; their parts: queries, corpus"),
        ("banking", "queries,corpus", "--rewrite corpus: Classification tasks have no corpus "
         "to rewrite; their parts: queries, train"),
        ("sample", "queries,docs", "unknown --rewrite part 'docs'; choose from queries, "
         "corpus, train, references"),
        ("xquad", "corpus", "--rewrite corpus leaves out queries, the scored texts; name them "
         "too (queries,corpus)"),
    ],
)  # fmt: skip
def test_a_part_the_task_type_lacks_is_refused(
    scripted, shared_data, invoke, tmp_path, source, parts, message
):
    names = {
        "sample": ["sample"],
        "xquad": ["XQuADRetrieval", "--data-dir", shared_data / "XQuADRetrieval", "--subset",
                  "en", "--split", "test"],
        "banking": ["Banking77Classification", "--data-dir",
                    shared_data / "Banking77Classification"],
    }  # fmt: skip
    out = tmp_path / "run"
    result = invoke(
        "gen", *names[source], "--limit", "3", "-b", "scripted", "--rewrite", parts, "-o", out
    )
    assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n")
    assert not out.exists()
    assert scripted.calls == []


def test_another_rewrite_on_an_existing_folder_is_refused(scripted, shared_data, invoke, tmp_path):
    out = tmp_path / "run"
    data = shared_data / "Banking77Classification"
    args = ["gen", "Banking77Classification", "--data-dir", data, "--limit", "3"]
    args += ["-b", "scripted", "-q", "-o", out]
    assert invoke(*args).exit_code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    calls = len(scripted.calls)
    result = invoke(*args, "-t", "summarisation", "--rewrite", "queries,train")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: output {out} was made with --rewrite queries, not queries,train; "
        "choose another --output\n",
    )
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert len(scripted.calls) == calls


@pytest.mark.slow
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
    assert invoke("evaluate", run, "-m", MODEL, "-o", out, "-q").exit_code == 0
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
        "evaluate", plain, "--task-type", "Classification", "-m", MODEL, "-o", by_hand, "-q"
    )
    assert result.exit_code == 0, result.output
    (expected,) = json.loads((by_hand / "results.json").read_text(encoding="utf-8"))["models"][0][
        "results"
    ]
    assert variant["main_score"] == expected["main_score"] != original["main_score"]


def test_a_limited_corpus_keeps_what_the_kept_queries_need():
    """The first N documents plus those judged relevant to the kept queries and, for
    Reranking, their candidates, in corpus order."""
    from shiftbench.core.data.parts import ranking_rows

    corpus = datasets.Dataset.from_list([{"id": f"d{i}", "text": f"doc {i}"} for i in range(8)])
    qrels = datasets.Dataset.from_list(
        [{"query-id": q, "corpus-id": d, "score": 1} for q, d in [("q0", "d6"), ("q9", "d7")]]
    )
    ranked = datasets.Dataset.from_list(
        [{"query-id": "q0", "corpus-ids": ["d4", "d6"]}, {"query-id": "q9", "corpus-ids": ["d5"]}]
    )
    source = SimpleNamespace(splits=("test",))
    tables = {"corpus/test": corpus, "qrels/test": qrels, "top_ranked/test": ranked}
    out = ranking_rows(source, {"test": [{"id": "q0"}]}, tables, 2)
    assert list(out) == ["corpus.test", "qrels.test", "top_ranked.test"]
    assert [(d["row_id"], d["id"]) for d in out["corpus.test"]] == [
        (0, "d0"), (1, "d1"), (4, "d4"), (6, "d6")
    ]  # fmt: skip
    assert out["qrels.test"] == [{"query-id": "q0", "corpus-id": "d6", "score": 1}]
    assert out["top_ranked.test"] == [{"query-id": "q0", "corpus-ids": ["d4", "d6"]}]
    unlimited = ranking_rows(source, {"test": [{"id": "q0"}]}, tables, None)
    assert len(unlimited["corpus.test"]) == 8 and len(unlimited["qrels.test"]) == 2


def test_a_small_limit_spreads_over_the_labels(scripted, shared_data, invoke, tmp_path):
    """Banking77's splits are sorted by label: --limit 8 keeps the first row of each of
    the first eight labels (computed here with pandas), in both test and train, so the
    classifier of a small run sees eight classes, not one."""
    import pandas as pd

    run = tmp_path / "run"
    data = shared_data / "Banking77Classification"
    args = ["--data-dir", data, "--limit", "8", "-t", "paraphrase", "-s", "1", "-q"]
    result = invoke(
        "gen", "Banking77Classification", *args, "-b", "scripted", "--rewrite", "queries,train",
        "-o", run,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for split in ("test", "train"):
        frame = pd.read_json(data / "data" / f"{split}.jsonl", lines=True)
        turn = frame.groupby("label", sort=False).cumcount()
        order = pd.factorize(frame["label"])[0]
        ranked = frame.assign(turn=turn, order=order).sort_values(["turn", "order"], kind="stable")
        expected = sorted(ranked.index[:8].tolist())
        rows = read_rows(run / "paraphrase-s1" / f"{split}.jsonl")
        assert [r["row_id"] for r in rows] == expected
        assert [r["label"] for r in rows] == list(range(8))
        assert [r["original_text"] for r in rows] == frame["text"][expected].tolist()
