"""gen --protocol hteb --hteb-prompts sends, request for request, what HTEB's generator
sends for the task types whose records hold lists of texts (issue 51, point 4):
reranking, summarisation and nested clustering.

As in test_hteb_requests.py (whose stand-in prompts, hteb_stub replies and request builder this
module reuses), the stub records every request body and the bodies are compared with what
HTEB v1.1's generator builds for the same records, seed and settings, worked out here on
their own from HTEB's rules (ThisIsManuel/HTEB hteb/load_datasets.py,
hteb/dataset_preparation.py, hteb/generation.py):

- reranking: HTEB's record is one query with its candidates, in the candidate list's
  order, split into `positive` (judged relevant) and `negative`; a candidate's text is its
  title and body joined by a space. Its generator sends, record by record, the query, then
  (when the corpus is transformed) each positive, then each negative, each slot its own
  request, so a document among two queries' candidates is sent twice;
- summarisation: record by record, every human summary, then every machine summary;
- nested clustering: record by record (one record a set), every text of the set.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.evaluate import _candidates, _card, _jsonl, _ranking_tables
from support.files import read_rows
from support.summarization import summeval_folder

from integration.test_hteb_requests import (
    SEED,
    canonical,
    expected_requests,
    write_prompts,
)

Slots = list[tuple[str, str | None]]


def scripted(texts: list[str]) -> dict[str, str]:
    """JSON replies for every other distinct text (and for those replies' own rewrites, a
    second stage's inputs); the rest are echoed, which HTEB's parser refuses, so they are
    asked again to the last retry."""
    replies = {}
    for i, text in enumerate(dict.fromkeys(t.strip() for t in texts)):
        if i % 2 == 0:
            first = f"Plume {text}"
            replies[text] = json.dumps({"transformed_text": first})
            replies[first] = json.dumps({"transformed_text": f"Plume {first}"})
    return replies


def run_gen(invoke, server, tmp_path: Path, source: list[Any], transform: str, *extra: Any) -> Path:
    out = tmp_path / "run"
    result = invoke(
        "gen", *source, "--protocol", "hteb", "--hteb-prompts", write_prompts(tmp_path / "HTEB"),
        "-t", transform, "-s", SEED, "-b", "openai", "--base-url", server.url, "-m", "stub-model",
        "--max-failure-rate", "1", "--no-cache", "-q", "-o", out, *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def check(hteb_stub, slots: Slots, transformation: str, dataset: str) -> None:
    """The stub received exactly HTEB's requests for `slots`, retries included."""
    expected, _ = expected_requests(slots, transformation, dataset, hteb_stub.replies, 0)
    assert canonical(hteb_stub.requests) == canonical(expected)
    assert len(hteb_stub.requests) == len(expected) > 0
    assert Counter(b["seed"] for b in hteb_stub.requests)[SEED + 3] > 0  # echoes tried four times


# Reranking: a SciDocsRR-named stand-in of mteb's layout (corpus, queries, judgements,
# candidate lists) made of XQuAD's English paragraphs, ten candidates per query (the
# relevant paragraph and its neighbours, so neighbouring queries share candidates)
RERANK_QUERIES = 4


def reranking_folder(root: Path, data: Path) -> dict[str, list[dict[str, Any]]]:
    corpus, queries, qrels, relevant = _ranking_tables(data / "XQuADRetrieval" / "en",
                                                       RERANK_QUERIES)  # fmt: skip
    ranked = _candidates(corpus, queries, relevant)
    keep = {d for r in ranked for d in r["corpus-ids"]}
    tables = {"corpus": [d for d in corpus if d["id"] in keep], "queries": queries,
              "qrels": qrels, "top_ranked": ranked}  # fmt: skip
    for name, rows in tables.items():
        _jsonl(root / f"{name}.jsonl", rows)
    _card(root, {n: f"{n}.jsonl" for n in tables})
    return tables


def reranking_records(tables: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """HTEB's reranking records (its load_datasets reranking reader): one per query, in the
    queries' order, the candidates in their list's order, a judged one (score above 0)
    positive, the others negative, each as `title body` (the body alone without title)."""
    docs = {d["id"]: d for d in tables["corpus"]}
    scores = {(r["query-id"], r["corpus-id"]): r["score"] for r in tables["qrels"]}
    ranked = {r["query-id"]: r["corpus-ids"] for r in tables["top_ranked"]}
    records = []
    for q in tables["queries"]:
        texts = {True: [], False: []}
        for doc in ranked[q["id"]]:
            title, body = docs[doc].get("title") or "", docs[doc]["text"] or ""
            texts[scores.get((q["id"], doc), 0) > 0].append(f"{title} {body}" if title else body)
        records.append({"query": q["text"], "positive": texts[True], "negative": texts[False]})
    return records


@pytest.mark.parametrize(
    ("rewrite", "transform", "transformation"),
    [("queries", "translation", "translation"),
     ("queries,corpus", "cross-translation", "cross_translation")],
    ids=["queries", "queries,corpus"],
)  # fmt: skip
def test_reranking_sends_htebs_requests(
    hteb_stub, invoke, tmp_path, shared_data, rewrite, transform, transformation
):
    folder = tmp_path / "SciDocsRR"
    tables = reranking_folder(folder, shared_data)
    records = reranking_records(tables)
    transform_corpus = "corpus" in rewrite
    fields = ("query", "positive", "negative") if transform_corpus else ("query",)
    texts = [t for r in records for f in fields for t in ([r[f]] if f == "query" else r[f])]
    hteb_stub.replies = scripted(texts)
    out = run_gen(invoke, hteb_stub, tmp_path, [folder, "--task-type", "Reranking"], transform,
                  "--rewrite", rewrite)  # fmt: skip
    check(hteb_stub, [(t, "eng") for t in texts], transformation, "SciDocsRR")
    if transform_corpus:  # candidates shared by two queries are sent once per slot
        sent = Counter(b["messages"][1]["content"] for b in hteb_stub.requests if b["seed"] == SEED)
        assert max(sent.values()) > 1
        assert len(texts) == RERANK_QUERIES * 11
        # the run keeps each document's first rewrite, of its title and body together
        corpus = read_rows(out / "cross-translation-s1337" / "corpus.test.jsonl")
        made = [d for d in corpus if d["status_text"] == "ok"]
        assert made and all(d["title"] == "" for d in corpus)
        for d in made:
            assert d["text"] == f"Plume {d['original_title']} {d['original_text']}"


def test_summarisation_sends_htebs_requests(hteb_stub, invoke, tmp_path):
    """SummEval's shape; both lists rewritten (--rewrite queries,references), HTEB's order:
    a document's human summaries before its machine summaries. One machine summary is
    shared by two documents: sent twice."""
    folder = summeval_folder(tmp_path / "summeval")
    records = read_rows(folder / "data" / "test.jsonl")
    texts = [t for r in records for f in ("human_summaries", "machine_summaries") for t in r[f]]
    hteb_stub.replies = scripted(texts)
    run_gen(invoke, hteb_stub, tmp_path, ["SummEvalSummarization.v2", "--data-dir", folder],
            "backtranslation", "--rewrite", "queries,references")  # fmt: skip
    check(hteb_stub, [(t, "eng") for t in texts], "backtranslation", "summeval")


# Nested clustering: TwentyNewsgroupsClustering's texts in mteb's rows (one text and its
# label each), which HTEB's loader groups into one record, the set to cluster
TOPICS = {
    "sci.space": ["Launch window slips to Tuesday", "Orbital debris tracked over Pacific",
                  "New lunar lander contract awarded"],
    "rec.autos": ["Winter tyres worth the cost?", "Clutch slipping on a 1994 sedan",
                  "Best oil for high mileage engines"],
    "comp.graphics": ["Rendering shadows with ray tracing", "Fast polygon fill routine",
                      "   ", "Fast polygon fill routine"],
}  # fmt: skip


def nested_records(root: Path) -> list[dict[str, Any]]:
    """The folder of rows, and HTEB's record made of them."""
    rows = [{"sentences": t, "labels": label} for label, texts in TOPICS.items() for t in texts]
    _jsonl(root / "test.jsonl", rows)
    _card(root, {"default": "test.jsonl"})
    return [{"sentences": [r["sentences"] for r in rows], "labels": [r["labels"] for r in rows]}]


def test_nested_clustering_sends_htebs_requests(hteb_stub, invoke, tmp_path):
    """A blank text is kept blank with no call; a text twice in the set is sent twice."""
    folder = tmp_path / "TwentyNewsgroupsClustering"
    records = nested_records(folder)
    texts = [t for r in records for t in r["sentences"]]
    hteb_stub.replies = scripted(texts)
    run_gen(invoke, hteb_stub, tmp_path, ["TwentyNewsgroupsClustering", "--data-dir", folder],
            "cross-translation")  # fmt: skip
    check(hteb_stub, [(t, "eng") for t in texts], "cross_translation", "TwentyNewsgroupsClustering")
    sent = Counter(b["messages"][1]["content"] for b in hteb_stub.requests if b["seed"] == SEED)
    assert sent["Fast polygon fill routine"] == 2
    assert sent["   "] == 0
