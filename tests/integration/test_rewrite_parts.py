"""gen --rewrite: a ranking corpus and a Classification train split rewritten, and scored."""

from __future__ import annotations

import json
from types import SimpleNamespace

import datasets
import pytest
from support.files import read_rows
from support.rewrite_parts import FAILED_DOCUMENT, LIMIT


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
