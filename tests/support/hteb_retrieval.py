"""An HTEB retrieval tree written as HTEB's generator writes one, worked out here from its
rules (its loader's reading of the Hub's corpus, queries and qrels, its data filter, its
rewrite of the texts it targets, its statistics and its writer), and HTEB's loader checks
and evaluation re-derived for the tests to compare shiftbench against."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from support.files import read_rows
from support.hteb import MODEL

REVISION = "6c1bcf74b13dfd823aff056b79d4d93e702f19c7"  # HTEB's arguana metadata's


def settings_hash(doc: dict[str, Any]) -> str:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def folder_name(model: str) -> str:
    """HTEB's generator folder for a plain Hub id: `/` as `~2F`."""
    return model.replace("~", "~7E").replace("/", "~2F")


def hub_records(shared_data: Path, documents: int = 16, per_document: int = 2) -> list[dict]:
    """XQuADRetrieval (en) as HTEB's loader reads an ArguAna-shaped dataset from the Hub:
    the corpus (`_id`, `title`, `text`), then the queries (`_id`, `text`), then the test
    judgements, each record followed by `_hteb_split`, `_hteb_part` and `language`. The
    first `documents` paragraphs (every other one untitled), at most `per_document`
    queries judging each, one query judging nothing and one whose text is blank (HTEB's
    filter leaves both out), and a document under the id of a query that does not judge
    it (the trap `ignore_identical_ids` is for)."""
    source = shared_data / "XQuADRetrieval" / "en"
    corpus = read_rows(source / "corpus.jsonl")[:documents]
    held = {d["id"] for d in corpus}
    qrels = [r for r in read_rows(source / "qrels.jsonl") if r["corpus-id"] in held]
    taken: dict[str, int] = {}
    kept = []
    for r in qrels:
        if taken.get(r["corpus-id"], 0) < per_document:
            taken[r["corpus-id"]] = taken.get(r["corpus-id"], 0) + 1
            kept.append(r)
    judged = {r["query-id"] for r in kept}
    queries = [q for q in read_rows(source / "queries.jsonl") if q["id"] in judged]
    queries.insert(3, {"id": "unjudged-query", "text": "What does nobody ask about?"})
    queries.insert(5, {"id": "blank-query", "text": "  "})
    kept.append({"query-id": "blank-query", "corpus-id": corpus[0]["id"], "score": 1})
    trap = queries[1]
    documents_out = [
        {"_id": d["id"], "title": d["title"] if i % 2 == 0 else "", "text": d["text"]}
        for i, d in enumerate(corpus)
    ]
    documents_out.insert(4, {"_id": trap["id"], "title": "", "text": trap["text"]})

    def tagged(rows: list[dict], split: str, part: str) -> list[dict]:
        return [{**r, "_hteb_split": split, "_hteb_part": part, "language": "eng"} for r in rows]

    return [
        *tagged(documents_out, "corpus", "corpus"),
        *tagged([{"_id": q["id"], "text": q["text"]} for q in queries], "queries", "queries"),
        *tagged(kept, "test", "qrels"),
    ]


def filtered(records: list[dict]) -> tuple[list[dict], dict[str, Any]]:
    """HTEB's data filter: a query whose text is blank, which judges nothing or judges a
    document not in the corpus is left out with its judgements; its report (version 2)."""
    corpus = {r["_id"] for r in records if r["_hteb_part"] == "corpus"}
    judged: dict[str, list[str]] = {}
    for r in records:
        if r["_hteb_part"] == "qrels":
            judged.setdefault(r["query-id"], []).append(r["corpus-id"])
    left_out, dropped = [], set()
    for i, r in enumerate(records):
        if r["_hteb_part"] != "queries":
            continue
        missing = sorted(set(judged.get(r["_id"], [])) - corpus)
        reason = ("empty_text" if not r["text"].strip() else "missing_documents" if missing
                  else "no_judgments" if not judged.get(r["_id"]) else None)  # fmt: skip
        if reason:
            dropped.add(r["_id"])
            left_out.append({"row_index": i, "query_id": r["_id"], "reason": reason,
                             "missing_document_ids": missing})  # fmt: skip
    kept = [
        r for r in records
        if not (r["_hteb_part"] == "queries" and r["_id"] in dropped)
        and not (r["_hteb_part"] == "qrels" and r["query-id"] in dropped)
    ]  # fmt: skip

    def counts(rows: list[dict]) -> dict[str, int]:
        parts = [r["_hteb_part"] for r in rows]
        return {"records": len(rows), **{p: parts.count(p) for p in ("corpus", "queries", "qrels")}}

    report = {
        "version": 2, "task_type": "retrieval", "input_scope": "stored_records",
        "counts_before": counts(records), "counts_after": counts(kept), "excluded": left_out,
        "excluded_documents": [], "excluded_candidates": [],
    }  # fmt: skip
    return kept, report


def sent_texts(records: list[dict], transform_corpus: bool) -> list[tuple[int, str]]:
    """The (record, field) slots HTEB's generator is given, non-blank ones only, in order."""
    out = []
    for i, r in enumerate(records):
        fields = {"queries": ("text",), "corpus": ("title", "text") if transform_corpus else ()}
        for f in fields.get(r["_hteb_part"], ()):
            if r.get(f) is not None and r[f].strip():
                out.append((i, f))
    return out


def rewrite(records: list[dict], transform_corpus: bool, prefix: str, failed: set[int],
            unchanged: set[int]) -> tuple[list[dict], dict[str, Any]]:  # fmt: skip
    """The generator's output: each text it was given rewritten (every other word after
    `prefix`; the `failed`-th ones given up on, written empty; the `unchanged`-th ones
    returned as they were), every other value as it was; and its statistics (every
    failure retried, one recovered)."""
    out = [dict(r) for r in records]
    slots = sent_texts(records, transform_corpus)
    for n, (i, f) in enumerate(slots):
        if n in failed:
            out[i][f] = ""
        elif n not in unchanged:
            # a lossy rewrite, so that rankings move: every other word kept
            out[i][f] = f"{prefix} {' '.join(records[i][f].split()[::2])}"
    stats = {
        "records_total": len(records),
        "records_targeted": len({i for i, _ in slots}),
        "text_fields_total": len(slots),
        "records_with_fallback": len({slots[n][0] for n in failed}),
        "text_fields_with_fallback": len(failed),
        "unchanged_outputs": len(unchanged),
        "retried_text_fields": len(failed) + 1,
        "recovered_after_retry_text_fields": 1,
        "fallback_reasons": {"invalid_text_after_retries": len(failed)} if failed else {},
    }
    return out, stats


def write_generated(root: Path, dataset: str, transformation: str, seed: int,
                    records: list[dict], rewritten: list[dict], stats: dict, report: dict,
                    transform_corpus: bool, generated: str) -> Path:  # fmt: skip
    """One pair as HTEB's writer stores a generation: the data file named by the hash of
    the identity and generation time, written once through a file opened for exclusive
    creation, and the metadata in the writer's key order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    identity = {
        "generator_model": MODEL, "transformation": transformation, "dataset": dataset,
        "seed_transform": seed, "generation_datetime": generated,
    }  # fmt: skip
    digest = settings_hash(identity)
    folder = root / folder_name(MODEL) / dataset / transformation / str(seed)
    folder.mkdir(parents=True, exist_ok=True)
    kind = pa.array(records).type
    first = pa.array(records, type=kind)
    table = pa.Table.from_arrays(
        [first, pa.array(rewritten, type=first.type)],
        names=["original", f"{transformation}_seed_{seed}"],
    )
    with (folder / f"data_{digest}.parquet").open("xb") as handle:
        pq.write_table(table, handle, compression="zstd", use_dictionary=True,
                       write_statistics=True, version="2.6")  # fmt: skip
    doc = {**identity, "max_model_length": 8192, "max_tokens": 512, "max_retries": 3,
           "generation_statistics": stats, "data_filtering": report,
           "source_revision": REVISION, "transform_corpus": transform_corpus}  # fmt: skip
    with (folder / f"metadata_{digest}.JSON").open("x", encoding="utf-8") as handle:
        json.dump(doc, handle, ensure_ascii=False, indent=2, allow_nan=False)
        handle.write("\n")
    return folder


def arguana_tree(shared_data: Path, root: Path) -> dict[str, Any]:
    """An `arguana` tree: paraphrasing/1337 rewriting queries and documents (two texts
    given up on, one returned unchanged), style_change/1338 rewriting the queries alone
    (one given up on). Returns the stored records and each pair's rewritten ones."""
    stored, report = filtered(hub_records(shared_data))
    documents = sum(stored[i]["_hteb_part"] == "corpus" for i, _ in sent_texts(stored, True))
    # a document's title and a query given up on, a document's text returned as it was
    paraphrased, stats = rewrite(stored, True, "In other words,", {2, documents + 1}, {5})
    write_generated(root, "arguana", "paraphrasing", 1337, stored, paraphrased, stats, report,
                    True, "2026-09-20T10:00:00Z")  # fmt: skip
    styled, stats = rewrite(stored, False, "Formally put:", {1}, set())
    write_generated(root, "arguana", "style_change", 1338, stored, styled, stats, report,
                    False, "2026-09-20T11:30:00Z")  # fmt: skip
    return {"original": stored, "paraphrase-s1337": paraphrased, "style-change-s1338": styled}


def as_stored(records: list[dict]) -> list[dict]:
    """Records as a Parquet file gives them back: every field of their struct in each."""
    import pyarrow as pa

    return pa.array(records).to_pylist()


def tree_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def loader_accepts(root: Path) -> dict[str, tuple[list[dict], list[dict]]]:
    """HTEB's loader's checks of a retrieval tree, re-derived: each folder's newest pair,
    its metadata's keys, folders and file name hash, its two struct columns of one type
    without schema metadata, its record count, its records' ids and judgements, its
    filter report against the stored records, and a rewrite that keeps every record's
    identity. Returns each pair's (original, rewritten) records, by <transformation>/<seed>."""
    import pyarrow.parquet as pq

    out = {}
    for meta_path in sorted(root.rglob("metadata*.JSON")):
        doc = json.loads(meta_path.read_text(encoding="utf-8"))
        required = {"generator_model", "transformation", "dataset", "seed_transform",
                    "generation_datetime", "max_model_length", "max_tokens", "max_retries",
                    "generation_statistics", "transform_corpus"}  # fmt: skip
        optional = {"data_filtering", "source_revision", "translation_language_selection"}
        assert required <= set(doc) <= required | optional, meta_path
        assert type(doc["transform_corpus"]) is bool
        if doc["generation_datetime"] is not None:
            dt.datetime.strptime(doc["generation_datetime"], "%Y-%m-%dT%H:%M:%SZ")
        identity = {k: doc[k] for k in ("generator_model", "transformation", "dataset",
                                        "seed_transform", "generation_datetime")}  # fmt: skip
        if doc["generation_datetime"] is None:
            identity.pop("generation_datetime")
            data = meta_path.with_name("data.parquet")
        else:
            data = meta_path.with_name(f"data_{settings_hash(identity)}.parquet")
        assert data.is_file(), data
        assert data.parts[-5:-1] == (folder_name(doc["generator_model"]), doc["dataset"],
                                     doc["transformation"], str(doc["seed_transform"]))  # fmt: skip
        column = f"{doc['transformation']}_seed_{doc['seed_transform']}"
        with pq.ParquetFile(data) as parquet:
            schema = parquet.schema_arrow
            assert not schema.metadata and schema.names == ["original", column]
            assert schema.field("original").type == schema.field(column).type
            table = parquet.read().to_pydict()
        original, rewritten = table["original"], table[column]
        assert doc["generation_statistics"]["records_total"] == len(original)
        corpus = {r["_id"] for r in original if r["_hteb_part"] == "corpus"}
        queries = {r["_id"] for r in original if r["_hteb_part"] == "queries"}
        judged = [(r["query-id"], r["corpus-id"]) for r in original if r["_hteb_part"] == "qrels"]
        assert len(corpus) + len(queries) + len(judged) == len(original)
        assert len(set(judged)) == len(judged)
        assert {q for q, _ in judged} == queries and {d for _, d in judged} <= corpus
        report = doc.get("data_filtering")
        if report is not None:
            counts = {"records": len(original), "corpus": len(corpus), "queries": len(queries),
                      "qrels": len(judged)}  # fmt: skip
            assert report["counts_after"] == counts
            assert not {e["query_id"] for e in report["excluded"]} & queries
        for before, after in zip(original, rewritten, strict=True):
            texts = {"queries": {"text"}, "corpus": {"title", "text"}}.get(
                before["_hteb_part"], set()
            )
            assert {k: v for k, v in before.items() if k not in texts} == {
                k: v for k, v in after.items() if k not in texts
            }
            if before["_hteb_part"] == "corpus" and not doc["transform_corpus"]:
                assert before == after
        out[f"{doc['transformation']}/{doc['seed_transform']}"] = (original, rewritten)
    return out


def hteb_ndcg(original: list[dict], rewritten: list[dict] | None, encode: Any,
              ignore_identical_ids: bool) -> float:  # fmt: skip
    """HTEB's evaluation of a retrieval pair, re-derived: a rewritten text left empty is
    replaced by its original; a document is its title and text, each stripped, the blank
    ones dropped, joined by a space; queries and documents scaled to unit length (no norm
    below 1e-12) and compared by dot product; each query's documents sorted by cosine with
    a stable sort, its own id dropped where the dataset says so, the first ten kept;
    pytrec_eval's ndcg_cut.10, averaged and rounded to five decimals."""
    import numpy as np
    import pytrec_eval

    records = []
    for i, before in enumerate(original):
        record = dict(before if rewritten is None else rewritten[i])
        for f in ("title", "text"):
            if (
                before.get(f) is not None
                and before[f].strip()
                and not (record.get(f) or "").strip()
            ):
                record[f] = before[f]
        records.append(record)
    corpus, queries, qrels = {}, {}, {}
    for r in records:
        if r["_hteb_part"] == "corpus":
            parts = [r[k] for k in ("title", "text") if r.get(k) is not None]
            corpus[r["_id"]] = (
                parts[0] if len(parts) == 1 else " ".join(p.strip() for p in parts if p.strip())
            )
        elif r["_hteb_part"] == "queries":
            queries[r["_id"]] = r["text"]
        else:
            qrels.setdefault(r["query-id"], {})[r["corpus-id"]] = int(r["score"])

    def unit(m: Any) -> Any:
        return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)

    cosines = unit(encode(list(queries.values()))) @ unit(encode(list(corpus.values()))).T
    run = {}
    for qi, qid in enumerate(queries):
        ranked = sorted(zip(corpus, cosines[qi], strict=True), key=lambda p: p[1], reverse=True)
        if ignore_identical_ids:
            ranked = [p for p in ranked if p[0] != qid]
        run[qid] = {d: float(s) for d, s in ranked[:10]}
    scored = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return round(sum(s["ndcg_cut_10"] for s in scored.values()) / len(scored), 5)
