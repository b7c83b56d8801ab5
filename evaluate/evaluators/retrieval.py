"""Retrieval and Reranking as mteb's AbsTaskRetrieval scores them.

The queries are the scored rows; the corpus and the relevance judgements (qrels) are the
split's context and never change between the original and a variant, so a delta comes
from the rewritten queries alone. Documents are embedded as "title text" (stripped),
queries as their text (followed by their instruction when they have one), each with the
model's own prompt for its role. Every query is scored against every document with the
model's similarity function (Reranking: against its pre-ranked candidates only); the top
1000 per query go to pytrec_eval for nDCG, MAP, recall, precision and hit rate at
k = 1, 3, 5, 10, 20, 100, 1000, and MRR@k is computed on the same ranking (ties broken by
document id, descending, as pytrec_eval breaks them). Where the dataset ignores identical
ids (mteb's ArguAna, FEVER, FiQA and others; `ignore_identical_ids`), the document with the
query's own id is then taken out of the query's ranking, leaving the rest where they were,
as mteb's retrieval evaluator does. Queries without judgements are left out, as mteb
leaves them out. mteb's abstention curves (nAUC) are not computed.
Each of these is a mean over queries, so a delta's bootstrap interval reweights the
queries' own values (evaluate/resample.py).

Under `--protocol hteb` a Reranking task's main score is HTEB's, `mean_candidate_ap`:
each query's scikit-learn average precision over its candidates, then the mean over the
queries (also a mean over queries, resampled the same way). It is not one of mteb's
metrics and differs from mteb's MAP where candidates tie (scikit-learn scores a tie as
one threshold, pytrec_eval orders it by document id) and where a relevant document is not
among the candidates (pytrec_eval still counts it).

Under `--protocol hteb` a Retrieval task's main score is HTEB's, `cosine_ndcg_at_10`
(hteb/evaluation.py): queries and documents are scaled to unit length in numpy (no norm
below 1e-12) and compared by their dot product, whatever the model's own similarity; each
query keeps the ten documents of highest cosine, documents of equal cosine in corpus order,
after leaving out the document with the query's own id where the dataset says so
(`ignore_identical_ids`, in the task's evaluation settings); pytrec_eval's `ndcg_cut.10` of
those ten, averaged over the queries and rounded to five decimals. Texts are HTEB's:
a document is its title and text joined by a space (a blank one embedded as ""), a query
its text without an instruction. A query one of whose judged documents is not in the
corpus is left out, as HTEB's release leaves it out. mteb's metrics stay beside it,
computed as mteb computes them. The interval resamples the queries' unrounded values.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from shiftbench.core.protocols import ignores_identical_ids
from shiftbench.core.records import DataRow
from shiftbench.errors import InputError
from shiftbench.evaluate.resample import weighted_mean

if TYPE_CHECKING:
    from collections.abc import Iterator

    from shiftbench.evaluate.evaluators import Scoring

K_VALUES = (1, 3, 5, 10, 20, 100, 1000)
# Reranking's main score under --protocol hteb: HTEB's mean of per-query average precision
CANDIDATE_AP = "mean_candidate_ap"
TOP_K = max(K_VALUES)
# Retrieval's main score under --protocol hteb: HTEB's nDCG@10 (module docstring)
TOP_TEN_NDCG = "cosine_ndcg_at_10"
HTEB_DEPTH = 10
HTEB_PLACES = 5
HTEB_MIN_NORM = 1e-12
# query rows compared with the whole corpus at once: bounds the similarity block's size
HTEB_BLOCK = 1 << 24
CORPUS_CHUNK = 50_000


def document_text(row: DataRow) -> str:
    title = row.get("title") or ""
    return f"{title} {row['text']}".strip() if title else str(row["text"]).strip()


def query_text(row: DataRow) -> str:
    instruction = row.get("instruction")
    return f"{row['text']} {instruction}" if instruction is not None else str(row["text"])


def hteb_document_text(row: DataRow) -> str:
    """A document's text as HTEB's release builds it: the title and text given (not None)
    joined by a space and stripped, a lone field as it is, and a blank text as ""."""
    parts = [row[k] for k in ("title", "text") if row.get(k) is not None]
    if not all(isinstance(p, str) for p in parts):
        return ""
    text = parts[0] if len(parts) == 1 else " ".join(parts).strip()
    return text if text.strip() else ""


def judgements(rows: list[DataRow]) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for r in rows:
        qrels[str(r["query-id"])][str(r["corpus-id"])] = int(r["score"])
    return dict(qrels)


def rank(
    similarity: Any,
    queries: np.ndarray,
    query_ids: list[str],
    documents: np.ndarray,
    document_ids: list[str],
    candidates: dict[str, list[str]] | None = None,
) -> dict[str, dict[str, float]]:
    """The top `TOP_K` documents of each query with their similarity scores."""
    import torch

    run: dict[str, dict[str, float]] = {}
    if candidates is not None:
        for qid, ids, scores in candidate_scores(
            similarity, queries, query_ids, documents, document_ids, candidates
        ):
            values, idx = torch.topk(scores, min(TOP_K, len(ids)))
            run[qid] = {
                ids[i]: float(v) for i, v in zip(idx.tolist(), values.tolist(), strict=True)
            }
        return run
    heaps: dict[str, list[tuple[float, str]]] = {q: [] for q in query_ids}
    for start in range(0, len(document_ids), CORPUS_CHUNK):
        chunk_ids = document_ids[start : start + CORPUS_CHUNK]
        scores = torch.as_tensor(similarity(queries, documents[start : start + CORPUS_CHUNK]))
        values, idx = torch.topk(scores, min(TOP_K, scores.shape[1]), dim=1)
        for qi, qid in enumerate(query_ids):
            heap = heaps[qid]
            for i, v in zip(idx[qi].tolist(), values[qi].tolist(), strict=True):
                if len(heap) < TOP_K:
                    heapq.heappush(heap, (v, chunk_ids[i]))
                else:
                    heapq.heappushpop(heap, (v, chunk_ids[i]))
    return {qid: {doc: score for score, doc in heap} for qid, heap in heaps.items()}


def candidate_scores(
    similarity: Any,
    queries: np.ndarray,
    query_ids: list[str],
    documents: np.ndarray,
    document_ids: list[str],
    candidates: dict[str, list[str]],
) -> Iterator[tuple[str, list[str], Any]]:
    """Each query that has candidates, its candidate ids and their similarity scores."""
    import torch

    position = {d: i for i, d in enumerate(document_ids)}
    for qi, qid in enumerate(query_ids):
        ids = candidates.get(qid) or []
        if ids:
            scores = similarity(queries[qi : qi + 1], documents[[position[d] for d in ids]])
            yield qid, ids, torch.as_tensor(scores)[0]


def candidate_ap(
    scored: Iterator[tuple[str, list[str], Any]], qrels: dict[str, dict[str, int]]
) -> dict[str, float]:
    """HTEB's reranking figure per query: scikit-learn's average precision of the query's
    candidates, ranked by similarity, against their judgements (grade > 0 relevant;
    candidates of equal score are one threshold, so tie order does not matter). A query
    whose candidates are all relevant or all irrelevant has no such figure and is left
    out, as HTEB's release leaves it out."""
    from sklearn.metrics import average_precision_score

    out: dict[str, float] = {}
    for qid, ids, scores in scored:
        relevant = [int(qrels.get(qid, {}).get(d, 0) > 0) for d in ids]
        if 0 < sum(relevant) < len(relevant):
            out[qid] = float(average_precision_score(relevant, scores.float().numpy()))
    return out


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length at their own precision, a norm below 1e-12 taken as 1e-12
    (HTEB's explicit cosine)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, HTEB_MIN_NORM)


def nearest(scores: np.ndarray, depth: int, skip: int | None = None) -> np.ndarray:
    """The positions of the `depth` highest scores, highest first, equal scores in
    position order (a stable sort of the whole row, found without sorting it all), with
    position `skip` left out before the cut."""
    want = depth + (skip is not None)
    pool = np.arange(scores.size)
    if scores.size > want:
        kth = np.partition(scores, scores.size - want)[scores.size - want]
        pool = np.flatnonzero(scores >= kth)  # every score tied with the cut's is kept
    order = pool[np.argsort(-scores[pool], kind="stable")]
    if skip is not None:
        order = order[order != skip]
    return order[:depth]


def hteb_ranking(
    queries: np.ndarray,
    query_ids: list[str],
    documents: np.ndarray,
    document_ids: list[str],
    ignore_identical_ids: bool,
) -> dict[str, dict[str, float]]:
    """Each query's ten documents of highest cosine with their cosines, as HTEB's release
    picks them (module docstring)."""
    q, d = unit_rows(queries), unit_rows(documents)
    position = {doc: i for i, doc in enumerate(document_ids)}
    step = max(1, HTEB_BLOCK // max(1, len(document_ids)))
    run: dict[str, dict[str, float]] = {}
    for start in range(0, len(query_ids), step):
        block = q[start : start + step] @ d.T
        for row, qid in zip(block, query_ids[start : start + step], strict=True):
            skip = position.get(qid) if ignore_identical_ids else None
            run[qid] = {document_ids[i]: float(row[i]) for i in nearest(row, HTEB_DEPTH, skip)}
    return run


def hteb_ndcg(
    run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]
) -> dict[str, float]:
    """pytrec_eval's nDCG@10 of every query it scores."""
    import pytrec_eval

    scored = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return {qid: float(s["ndcg_cut_10"]) for qid, s in scored.items()}


MEASURES = {"ndcg_cut": "ndcg", "map_cut": "map", "recall": "recall", "P": "precision",
            "success": "hit_rate"}  # fmt: skip


def per_query_scores(
    run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]
) -> tuple[dict[str, dict[str, float]], dict[str, dict[int, float]]]:
    """pytrec_eval's measures of every query it scores, and the reciprocal rank at each k
    of every query in the run."""
    import pytrec_eval

    ks = ",".join(map(str, K_VALUES))
    measures = {f"{m}.{ks}" for m in ("map_cut", "ndcg_cut", "recall", "P", "success")}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    reciprocal: dict[str, dict[int, float]] = {}
    for qid, docs in run.items():
        relevant = {d for d, grade in qrels.get(qid, {}).items() if grade > 0}
        ranked = [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]
        first = next((i for i, d in enumerate(ranked[:TOP_K]) if d in relevant), None)
        reciprocal[qid] = {
            k: 0.0 if first is None or first >= k else 1.0 / (first + 1) for k in K_VALUES
        }
    return per_query, reciprocal


def retrieval_metrics(
    run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]
) -> dict[str, float]:
    """mteb's retrieval metrics of a run against judgements (means over the queries)."""
    return means(*per_query_scores(run, qrels))


def means(
    per_query: dict[str, dict[str, float]], reciprocal: dict[str, dict[int, float]]
) -> dict[str, float]:
    if not per_query:
        raise InputError("no query has both judgements and retrieved documents")
    n = len(per_query)
    out: dict[str, float] = {}
    for measure, name in MEASURES.items():
        for k in K_VALUES:
            out[f"{name}_at_{k}"] = sum(s[f"{measure}_{k}"] for s in per_query.values()) / n
    for k in K_VALUES:
        out[f"mrr_at_{k}"] = float(np.mean([r[k] for r in reciprocal.values()]))
    out["accuracy"] = out["recall_at_1"]
    return out


def query_values(
    per_query: dict[str, dict[str, float]],
    reciprocal: dict[str, dict[int, float]],
    query_ids: list[str],
    main: str,
) -> np.ndarray | None:
    """Each query's own value of the main score (NaN for a query the score leaves out),
    whose mean over the scored queries is the main score; None for a metric that is not
    such a mean."""
    if main == "accuracy":
        main = "recall_at_1"
    name, _, k = main.rpartition("_at_")
    if not k.isdigit() or int(k) not in K_VALUES:
        return None
    if name == "mrr":
        return np.asarray([reciprocal.get(q, {}).get(int(k), np.nan) for q in query_ids])
    measure = {v: m for m, v in MEASURES.items()}.get(name)
    if measure is None:
        return None
    key = f"{measure}_{k}"
    return np.asarray([per_query[q][key] if q in per_query else np.nan for q in query_ids])


def evaluate(scoring: Scoring) -> dict[str, float]:
    """Rank the corpus for every query (or its candidates) and score the ranking."""
    split = scoring.split
    corpus = scoring.context.get(f"corpus/{split}")
    qrel_rows = scoring.context.get(f"qrels/{split}")
    if corpus is None or qrel_rows is None:
        raise InputError(
            f"{scoring.source['name']}: {split} has no corpus or qrels to score against"
        )
    qrels = {q: docs for q, docs in judgements(qrel_rows).items() if docs}
    queries = [r for r in scoring.rows if str(r["id"]) in qrels]
    if not queries:
        raise InputError(f"{scoring.source['name']}: no query of {split} has judgements")
    query_ids = [str(r["id"]) for r in queries]
    document_ids = [str(r["id"]) for r in corpus]
    candidates = None
    if f"top_ranked/{split}" in scoring.context:
        # a candidate whose rewrite failed is not in a rewritten corpus: it drops out
        known = set(document_ids)
        candidates = {
            str(r["query-id"]): [str(d) for d in r["corpus-ids"] if str(d) in known]
            for r in scoring.context[f"top_ranked/{split}"]
        }
    q = scoring.embed([query_text(r) for r in queries], role="query")
    d = scoring.embed([document_text(r) for r in corpus], role="document")
    similarity = scoring.encoder.model.similarity
    run = rank(similarity, q, query_ids, d, document_ids, candidates)
    if ignores_identical_ids(scoring.source):
        for qid, ranked in run.items():  # dropped after ranking, not replaced: mteb's way
            ranked.pop(qid, None)
    per_query, reciprocal = per_query_scores(run, qrels)
    all_ids = [str(r["id"]) for r in scoring.rows]
    out = means(per_query, reciprocal)
    if candidates is not None and scoring.main_score == CANDIDATE_AP:
        ap = candidate_ap(
            candidate_scores(similarity, q, query_ids, d, document_ids, candidates), qrels
        )
        if not ap:
            raise InputError(
                f"{scoring.source['name']}: no query of {split} has both a relevant and "
                "an irrelevant candidate, so no average precision can be computed"
            )
        out[CANDIDATE_AP] = float(np.mean(list(ap.values())))
        per_query_ap = np.asarray([ap.get(qid, np.nan) for qid in all_ids])
        scoring.replicate = partial(weighted_mean, values=per_query_ap)
        return out
    if candidates is None and scoring.main_score == TOP_TEN_NDCG:
        return _with_hteb_ndcg(scoring, out, queries, corpus, qrels, all_ids)
    values = query_values(per_query, reciprocal, all_ids, scoring.main_score)
    if values is not None:
        scoring.replicate = partial(weighted_mean, values=values)
    return out


def _with_hteb_ndcg(
    scoring: Scoring,
    out: dict[str, float],
    queries: list[DataRow],
    corpus: list[DataRow],
    qrels: dict[str, dict[str, int]],
    all_ids: list[str],
) -> dict[str, float]:
    """`out` with HTEB's nDCG@10 (module docstring); its per-query values for the interval."""
    document_ids = [str(r["id"]) for r in corpus]
    known = set(document_ids)
    # HTEB's release leaves out a query that judges a document missing from the corpus
    kept = [r for r in queries if set(qrels[str(r["id"])]) <= known]
    if not kept:
        raise InputError(
            f"{scoring.source['name']}: every query of {scoring.split} with judgements "
            "judges a document that is not in the corpus"
        )
    query_ids = [str(r["id"]) for r in kept]
    q = scoring.embed([str(r["text"]) for r in kept], role="query")
    d = scoring.embed([hteb_document_text(r) for r in corpus], role="document")
    ignore = bool((scoring.source.get("protocol") or {}).get("ignore_identical_ids", False))
    per_query = hteb_ndcg(hteb_ranking(q, query_ids, d, document_ids, ignore), qrels)
    if not per_query:
        raise InputError(f"{scoring.source['name']}: no query of {scoring.split} was ranked")
    mean = sum(per_query.values()) / len(per_query)
    out[TOP_TEN_NDCG] = round(mean, HTEB_PLACES)
    values = np.asarray([per_query.get(qid, np.nan) for qid in all_ids])
    scoring.replicate = partial(weighted_mean, values=values)
    return out
