"""An HTEB reranking tree, both ways: import, `evaluate --protocol hteb` equal to HTEB's
reranking figure worked out here, export back to the same files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.environment import ENCODER
from support.files import read_rows
from support.hteb import MODEL
from support.hteb_lists import hteb_load, write_hteb_pair

from shiftbench.core.data.hteb import generator_directory

FIELDS = ("query", "positive", "negative")
DATASET = "SciDocsRR"


def _records(shared_data) -> list[dict]:
    """Four XQuAD (en) questions as SciDocsRR's records: each with its own paragraph and
    the next one as positives, the three after those (of the same article) as negatives."""
    source = shared_data / "XQuADRetrieval" / "en"
    corpus = {d["id"]: d["text"] for d in read_rows(source / "corpus.jsonl")}
    paragraphs = list(corpus.values())
    gold = {r["query-id"]: r["corpus-id"] for r in read_rows(source / "qrels.jsonl")}
    queries = read_rows(source / "queries.jsonl")
    out = []
    for query in queries[::40][:4]:
        at = paragraphs.index(corpus[gold[query["id"]]])
        out.append({
            "_id": query["id"],
            "query": query["text"],
            "positive": [paragraphs[at], paragraphs[at + 1]],
            "negative": paragraphs[at + 2 : at + 5],
            "_hteb_split": "test",
            "language": "eng",
        })  # fmt: skip
    return out


def _rewritten(records, corpus_too, given_up=()):
    """HTEB's transformed column: each query cut to its first three words, and with
    `corpus_too` each candidate to the second half of its words; empty where `given_up`
    names (record, field, position)."""
    out = []
    for i, record in enumerate(records):
        new = dict(record, query=" ".join(record["query"].split()[:3]))
        for key in FIELDS[1:] if corpus_too else ():
            new[key] = [" ".join(t.split()[len(t.split()) // 2 :]) for t in record[key]]
        for at, field, j in given_up:
            if at == i:
                if field == "query":
                    new["query"] = ""
                else:
                    new[field] = [("" if k == j else t) for k, t in enumerate(new[field])]
        out.append(new)
    return out


@pytest.fixture
def reranking_tree(shared_data, tmp_path):
    root = tmp_path / "transformations"
    records = _records(shared_data)
    write_hteb_pair(root, DATASET, "paraphrasing", 1337, records,
                    _rewritten(records, True, {(1, "query", 0), (2, "positive", 1)}), FIELDS,
                    transform_corpus=True)  # fmt: skip
    write_hteb_pair(root, DATASET, "summarise", 1337, records, _rewritten(records, False),
                    FIELDS[:1], generated="2026-09-17T10:00:00Z",
                    transform_corpus=False)  # fmt: skip
    return root, records


def hteb_reranking(records: list[dict]) -> float:
    """HTEB's reranking figure: each distinct text embedded once, each record's
    candidates scored by the model's own similarity (cosine) to its query, scikit-learn's
    average precision of positives against negatives, the mean over records."""
    from sentence_transformers import SentenceTransformer
    from sklearn.metrics import average_precision_score

    from shiftbench.core.models.encoders import resolve_encoder

    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    queries = list(dict.fromkeys(r["query"] for r in records))
    documents = list(dict.fromkeys(t for r in records for t in r["positive"] + r["negative"]))
    q = dict(zip(queries, model.encode(queries), strict=True))
    d = dict(zip(documents, model.encode(documents), strict=True))
    scores = []
    for r in records:
        candidates = r["positive"] + r["negative"]
        similarity = model.similarity(q[r["query"]][None], np.stack([d[t] for t in candidates]))
        labels = [1] * len(r["positive"]) + [0] * len(r["negative"])
        scores.append(average_precision_score(labels, np.asarray(similarity)[0]))
    return float(np.mean(scores))


def test_a_reranking_tree_imports_scores_as_hteb_and_exports_back(reranking_tree, invoke, tmp_path):
    tree, records = reranking_tree
    run, results, back = tmp_path / "run", tmp_path / "results", tmp_path / "back"
    made = invoke("hteb", "import", tree, "-o", run)
    assert (made.exit_code, made.stdout) == (0, (
        f"imported HTEB's {DATASET} rewrites by {MODEL} as original, paraphrase-s1337, "
        f"summarisation-s1337 to {run}\n"
    ))  # fmt: skip
    # the fallback query and candidate are each their own text's fallback
    queries = read_rows(run / "paraphrase-s1337" / "test.jsonl")
    assert [q["status_text"] for q in queries] == ["ok", "fallback", "ok", "ok"]
    documents = read_rows(run / "paraphrase-s1337" / "corpus.test.jsonl")
    assert [d["id"] for d in documents if d["status_text"] == "fallback"] == [
        f"{records[2]['_id']}:p1"
    ]
    assert not (run / "summarisation-s1337" / "corpus.test.jsonl").exists()

    done = invoke("evaluate", run, "-m", ENCODER, "--precision", "float32", "--no-plots",
                  "--resamples", "0", "-q", "-o", results)  # fmt: skip
    assert done.exit_code == 0, done.output
    doc = json.loads((results / "results.json").read_text(encoding="utf-8"))
    assert doc["protocol"]["name"] == "hteb"
    scored = {r["config"]: r for r in doc["models"][0]["results"] if not r.get("partial")}
    data = tree / generator_directory(MODEL) / DATASET
    for config, folder in (("original", None), ("paraphrase-s1337", "paraphrasing/1337"),
                           ("summarisation-s1337", "summarise/1337")):  # fmt: skip
        if folder is None:
            texts = records
        else:
            (pair,) = (data / folder).glob("data_*.parquet")
            texts = hteb_load(pair, FIELDS)[1]  # HTEB restores what its generator gave up
        assert scored[config]["main_score"] == pytest.approx(hteb_reranking(texts), abs=1e-6)
    assert scored["paraphrase-s1337"]["restored"] == {"rows": 1, "texts": 1, "kept_as_written": 0}
    # the rewritten candidates move the figure (so the comparison is not of equal inputs)
    assert abs(scored["paraphrase-s1337"]["main_score"] - scored["original"]["main_score"]) > 0.01

    exported = invoke("hteb", "export", run, "-o", back)
    assert (exported.exit_code, exported.stdout) == (
        0, f"wrote 2 HTEB pairs (paraphrasing/1337, summarise/1337) to {back}\n"
    )  # fmt: skip
    for folder in ("paraphrasing/1337", "summarise/1337"):
        theirs = sorted((data / folder).iterdir())
        ours = sorted((back / data.relative_to(tree) / folder).iterdir())
        assert [p.name for p in ours] == [p.name for p in theirs]
        assert [p.read_bytes() for p in ours] == [p.read_bytes() for p in theirs]
        (pair,) = (p for p in ours if p.suffix == ".parquet")
        assert hteb_load(pair, FIELDS) == hteb_load(
            next(p for p in theirs if p.suffix == ".parquet"), FIELDS
        )


def _shape(records, case):
    """The records (original, rewritten) of a tree HTEB's loader refuses."""
    rewritten = _rewritten(records, True)
    if case == "candidate lost":
        rewritten[1]["negative"] = rewritten[1]["negative"][:2]
    elif case == "no negative":
        records = [dict(r) for r in records]
        records[2]["negative"] = []
        rewritten[2]["negative"] = []
    elif case == "query list":
        records = [dict(r, query=[r["query"]]) for r in records]
        rewritten = [dict(r, query=[r["query"]]) for r in rewritten]
    elif case == "blank query":
        records = [dict(r) for r in records]
        records[3]["query"] = "  "
    return records, rewritten


@pytest.mark.parametrize("case", ["candidate lost", "no negative", "query list", "blank query"])
def test_a_reranking_tree_hteb_refuses_is_refused_in_one_line(shared_data, invoke, tmp_path, case):
    """Nothing is written, and the line names the file and the record."""
    root, out = tmp_path / "transformations", tmp_path / "run"
    records, rewritten = _shape(_records(shared_data), case)
    data, _ = write_hteb_pair(root, DATASET, "paraphrasing", 1337, records, rewritten, FIELDS,
                              transform_corpus=True)  # fmt: skip
    expected = {
        "candidate lost": f"{data}: record 1: negative: the rewrite holds 2 texts, the original 3",
        "no negative": f"{data}: record 2: no negative candidate, which HTEB's filter keeps out "
        "of its files",
        "query list": f"{data}: record 0: query must be one text (shiftbench reads no query list)",
        "blank query": f"{data}: record 3: the query is blank, which HTEB's filter keeps out",
    }[case]
    result = invoke("hteb", "import", root, "-o", out)
    assert (result.exit_code, result.stderr) == (2, f"Error: {expected}\n")
    assert not out.exists()


def test_a_reranking_file_without_query_ids_comes_back_without_them(shared_data, invoke, tmp_path):
    """askubuntudupquestions-reranking's records as HTEB loads them (the Hub's
    query/positive/negative rows, no `_id`): the queries are numbered by position, and
    the export writes the same bytes."""
    root, run, back = tmp_path / "transformations", tmp_path / "run", tmp_path / "back"
    records = [{k: v for k, v in r.items() if k != "_id"} for r in _records(shared_data)]
    dataset = "askubuntudupquestions-reranking"
    write_hteb_pair(root, dataset, "style_change", 1339, records,
                    _rewritten(records, False, {(0, "query", 0)}), FIELDS[:1],
                    transform_corpus=False)  # fmt: skip
    assert invoke("hteb", "import", root, "-o", run).exit_code == 0
    assert [q["id"] for q in read_rows(run / "original" / "test.jsonl")] == ["0", "1", "2", "3"]
    result = invoke("hteb", "export", run, "-o", back)
    assert (result.exit_code, result.stdout) == (
        0,
        f"wrote 1 HTEB pair (style_change/1339) to {back}\n",
    )
    folder = generator_directory(MODEL) + f"/{dataset}/style_change/1339"
    theirs = sorted((root / folder).iterdir())
    ours = sorted((back / folder).iterdir())
    assert [(p.name, p.read_bytes()) for p in ours] == [(p.name, p.read_bytes()) for p in theirs]
