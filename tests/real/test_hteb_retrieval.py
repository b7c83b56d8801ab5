"""Retrieval under `--protocol hteb` is scored as HTEB's release scores it: an explicit
cosine, each query's ten nearest documents (equal cosines in corpus order, the query's own
id left out where the dataset says so), pytrec_eval's nDCG@10, the mean rounded to five
decimals."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.environment import ENCODER
from support.evaluate import _card, _jsonl
from support.files import read_rows

COPIES = 11  # more than the ten kept, so a tie at the top decides what is kept


@pytest.fixture
def arguana_stand_in(shared_data, tmp_path):
    """XQuADRetrieval (en) laid out as ArguAna's files (mteb's ArguAna and HTEB's arguana
    metadata both ignore identical ids): the first 40 paragraphs and every query judging
    one of them, plus two traps. The first query's paragraph is copied 11 times, under ids
    that sort below its own and ahead of it in the corpus: the copies tie with it exactly.
    A query of another paragraph has its own text as a document under the query's id."""
    source = shared_data / "XQuADRetrieval" / "en"
    corpus = read_rows(source / "corpus.jsonl")[:40]
    held = {d["id"] for d in corpus}
    qrels = [r for r in read_rows(source / "qrels.jsonl") if r["corpus-id"] in held]
    judged = {r["query-id"] for r in qrels}
    queries = [q for q in read_rows(source / "queries.jsonl") if q["id"] in judged]
    gold = {r["query-id"]: r["corpus-id"] for r in qrels}
    at = next(i for i, d in enumerate(corpus) if d["id"] == gold[queries[0]["id"]])
    copies = [{**corpus[at], "id": f"a-copy-{i:02d}"} for i in range(COPIES)]
    other = next(q for q in queries if gold[q["id"]] != corpus[at]["id"])
    itself = {"id": other["id"], "title": "", "text": other["text"]}
    corpus = [*corpus[:at], *copies, *corpus[at:], itself]
    folder = tmp_path / "arguana"
    for name, rows in (("corpus", corpus), ("queries", queries), ("qrels", qrels)):
        _jsonl(folder / f"{name}.jsonl", rows)
    _card(folder, {n: f"{n}.jsonl" for n in ("corpus", "queries", "qrels")})
    return folder, corpus, queries, qrels


def hteb_figures(corpus, queries, qrels):
    """HTEB's retrieval figure, re-derived, with identical ids ignored (True) and kept
    (False): both sides scaled to unit length (no norm below 1e-12), cosines by dot
    product, each query's whole corpus sorted by cosine with a stable sort, its own id
    dropped or not, the first ten kept, pytrec_eval's ndcg_cut.10 averaged and rounded to
    five decimals."""
    import pytrec_eval
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")

    def vectors(texts):
        # each distinct text embedded once, so copies of a paragraph tie exactly
        distinct = list(dict.fromkeys(texts))
        found = dict(zip(distinct, model.encode(distinct, convert_to_numpy=True), strict=True))
        matrix = np.stack([found[t] for t in texts])
        lengths = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(lengths, 1e-12)

    documents = vectors(
        [" ".join(p for p in (d.get("title"), d["text"]) if p is not None).strip() for d in corpus]
    )
    asked = vectors([q["text"] for q in queries])
    cosines = asked @ documents.T
    judgements = {}
    for r in qrels:
        judgements.setdefault(r["query-id"], {})[r["corpus-id"]] = int(r["score"])
    figures = {}
    for ignore in (True, False):
        run = {}
        for q, row in zip(queries, cosines, strict=True):
            ranked = sorted(zip([d["id"] for d in corpus], row, strict=True), key=lambda p: -p[1])
            if ignore:
                ranked = [(doc, s) for doc, s in ranked if doc != q["id"]]
            run[q["id"]] = {doc: float(s) for doc, s in ranked[:10]}
        scored = pytrec_eval.RelevanceEvaluator(judgements, {"ndcg_cut.10"}).evaluate(run)
        figures[ignore] = round(sum(s["ndcg_cut_10"] for s in scored.values()) / len(scored), 5)
    return figures


def test_retrieval_under_hteb_is_htebs_ndcg(arguana_stand_in, invoke, tmp_path, embedding_store):
    folder, corpus, queries, qrels = arguana_stand_in
    out = tmp_path / "results"
    result = invoke(
        "evaluate", "ArguAna", "--data-dir", folder, "--protocol", "hteb", "-m", ENCODER,
        "--precision", "float32", "--cache-dir", embedding_store, "--no-plots", "-q", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["main_score"] == "cosine_ndcg_at_10"
    assert doc["source"]["protocol"]["retrieval_scoring"] == "top-10-cosine"
    assert doc["source"]["protocol"]["ignore_identical_ids"] is True
    (ours,) = doc["models"][0]["results"]
    assert ours["rows"] == len(queries) == 225

    figures = hteb_figures(corpus, queries, qrels)
    expected = figures[True]
    assert figures[False] != expected  # the query's own document counts when kept
    assert ours["main_score"] == pytest.approx(expected, abs=1e-6)
    assert ours["scores"]["cosine_ndcg_at_10"] == ours["main_score"]
    # printed as HTEB prints it: x100, two decimals
    assert f"original  test    225  {100 * expected:17.2f}" in result.stdout.splitlines()
    # the tie trap bites: mteb's ranking (equal scores by document id, descending, and the
    # query's own id dropped after the top 1000 are taken) gives another figure, reported beside
    assert ours["scores"]["ndcg_at_10"] - expected > 0.01


def test_default_scoring_leaves_out_the_querys_own_id_as_mteb_does(
    arguana_stand_in, scripted, invoke, tmp_path, embedding_store, mteb_model
):
    """Under shiftbench's own (mteb-exact) scoring, a dataset whose mteb task ignores
    identical ids (ArguAna) drops the document with the query's own id from the query's
    ranking, as mteb's retrieval evaluator does, so evaluate's figures are mteb's."""
    from support.mteb_tasks import ours, theirs

    import shiftbench

    folder = arguana_stand_in[0]
    run = tmp_path / "run"
    result = invoke(
        "gen", "ArguAna", "--data-dir", folder, "-t", "paraphrase", "-s", "1", "--limit", "60",
        "-b", "scripted", "-q", "-o", run, "--max-failure-rate", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    meta = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["source"]["protocol"] == {"ignore_identical_ids": True}
    tasks = shiftbench.mteb_tasks(run, data_dir=str(folder))
    assert all(t.ignore_identical_ids for t in tasks)
    expected = ours(invoke, run, tmp_path, embedding_store, "--data-dir", str(folder))
    got = theirs(mteb_model, tasks)
    assert sorted(got) == sorted(expected) == ["original", "paraphrase-s1"]
    for config, value in expected.items():
        assert got[config] == pytest.approx(value, abs=1e-4), config
