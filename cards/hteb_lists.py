"""A Reranking or Summarization run written as HTEB's transformation files.

The records are HTEB's (core/data/hteb_lists.py). A reranking record is a query row with
its candidates from `top_ranked.<split>`, in their order, split into `positive` (judged
relevant in `qrels.<split>`) and `negative`, each a document's title and text joined by a
space as HTEB's loader joins them, and `_id` its query id (a run imported from HTEB gets
back the records it had, with or without `_id`). A config with its own rewritten corpus
is written with `transform_corpus` and its candidates rewritten; any other with its
candidates as they are. A summarisation record is a row with its lists of summaries.

A rewritten text HTEB's generator would have given up on (core/data/hteb.py `given_up`,
text by text) is written empty, so HTEB's reuse mode scores the export as `--protocol
hteb` scores the run. Every pair is read back with HTEB's rules before the tree is moved
into place.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from shiftbench.core.data.hteb import (
    HTEB_NAMES,
    generator_directory,
    given_up,
    latest_pair,
    pair_names,
    read_pair,
)
from shiftbench.core.data.hteb_lists import check_pair, statistics, targeted_fields
from shiftbench.core.data.listfields import field_texts
from shiftbench.core.data.names import check_name
from shiftbench.core.data.parts import folder_split
from shiftbench.core.data.runcard import META_FILE
from shiftbench.core.data.runfolder import read_config_split
from shiftbench.core.data.source_languages import field_languages
from shiftbench.core.data.writes import stage_beside
from shiftbench.core.records import ConfigRecord, RunMeta
from shiftbench.errors import InputError

LISTED = ("Reranking", "Summarization")
DEFAULT_CONTEXT = 8192  # HTEB's max_model_length when its config names none
IMPORTED_KEYS = ("file", "file_sha256", "fallback_texts")  # what import adds to HTEB's


def export_listed(
    run: Path, output: Path, meta: RunMeta, dataset: str, generator: str | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Write the Reranking or Summarization run `run` as HTEB's tree at `output`; the
    <transformation>/<seed> folders written and the configs left out."""
    source = meta["source"]
    reranking = source["task_type"] == "Reranking"
    held = {c.get("subset", "default") for c in meta["configs"].values()}
    if held != {"default"}:
        raise InputError(f"{run}: HTEB's {dataset} has one subset; the run has {sorted(held)}")
    split = source["splits"][0]
    if "original" not in meta["configs"] or split not in meta["configs"]["original"]["rows"]:
        raise InputError(f"{run}: its original config holds no split {split}")
    chosen = {
        n: c
        for n, c in meta["configs"].items()
        if c.get("kind") == "transform" and c.get("transform") in HTEB_NAMES
    }
    if not chosen:
        raise InputError(f"{run} holds no config of a transformation HTEB has")
    imported = any("hteb" in c for c in chosen.values())
    language = _language(source)
    originals = _records(run, meta, "original", split, reranking, imported, language, None)
    stage = stage_beside(output)
    folders = []
    try:
        for name, info in chosen.items():
            model = generator or str((info.get("model") or {}).get("id") or "")
            if not model or model.startswith(("/", "./", "../", "~")):
                raise InputError(
                    f"{run}: config {name} records no Hub model id for its generator; "
                    "name it with --generator"
                )
            own = reranking and folder_split(f"corpus/{split}") in info["rows"]
            transformed = _records(run, meta, name, split, reranking, imported, language,
                                   originals)  # fmt: skip
            kind = "reranking" if reranking else "summarisation"
            doc = _metadata(info, model, dataset, source, originals, transformed, kind, own)
            for key in ("dataset", "transformation", "seed_transform"):
                check_name(str(doc[key]), run / META_FILE, f"configs.{name}.hteb.{key}")
            folder = _write_pair(stage, doc, originals, transformed)
            pair = latest_pair(folder)  # HTEB's rules, on what was written
            back = read_pair(pair)
            check_pair(*back, kind, own, pair.data)
            if back != (originals, transformed):
                raise AssertionError(f"{folder}: the records did not read back as written")
            folders.append(f"{doc['transformation']}/{doc['seed_transform']}")
        os.replace(stage, output)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    skipped = tuple(
        n for n, c in meta["configs"].items() if c.get("kind") != "original" and n not in chosen
    )
    return tuple(folders), skipped


def _language(source: Any) -> str | None:
    codes = (source.get("languages") or {}).get("default") or []
    found = field_languages(codes, ("text",))[0] if len(codes) == 1 else None
    return found.iso3 if found else None


def _text(row: dict[str, Any], rewritten: bool) -> str:
    """A row's text as HTEB reads it: empty where its generator would have given up on a
    rewrite; a document's title and text joined by a space."""
    if rewritten and given_up(row, "text")[0]:
        return ""
    title = row.get("title")
    return f"{title} {row['text']}" if title else str(row["text"])


def _records(
    run: Path,
    meta: RunMeta,
    name: str,
    split: str,
    reranking: bool,
    imported: bool,
    language: str | None,
    originals: list[dict[str, Any]] | None,
) -> list[dict[str, Any]]:
    """A config's rows as HTEB's records (the original's when `originals` is None, else
    a variant's, each text HTEB would have given up on empty)."""
    rows = read_config_split(run, meta, name, split)
    if not reranking:
        fields = meta["source"]["text_fields"]
        out = []
        for i, row in enumerate(rows):
            record = {k: v for k, v in row.items() if k != "row_id"}
            if originals is not None:
                record = dict(originals[i])
                for field in fields:
                    texts = zip(field_texts(row[field]), given_up(row, field), strict=True)
                    record[field] = ["" if failed else t for t, failed in texts]
            else:
                record.update(_hteb_split=split, language=language)
            out.append(record)
        return out
    if originals is not None:
        own = folder_split(f"corpus/{split}") in meta["configs"][name]["rows"]
        documents = _table(run, meta, name if own else "original", f"corpus/{split}")
        out = []
        candidates = _candidates(run, meta, split)
        for record, row, ids in zip(originals, rows, candidates, strict=True):
            new = dict(record, query=_text(row, True))
            for key in ("positive", "negative"):
                new[key] = [_text(documents[d], own) for d in ids[key]]
            out.append(new)
        return out
    documents = _table(run, meta, "original", f"corpus/{split}")
    out = []
    for row, ids in zip(rows, _candidates(run, meta, split), strict=True):
        built: dict[str, Any] = {}
        if "_id" in row or not imported:
            built["_id"] = row.get("_id", row["id"])
        built["query"] = row["text"]
        for key in ("positive", "negative"):
            built[key] = [_text(documents[d], False) for d in ids[key]]
        extra = {k: v for k, v in row.items() if k not in ("row_id", "id", "text", "_id")}
        out.append({**built, **extra, "_hteb_split": split, "language": language})
    return out


class _Documents(dict):
    """A config's documents by id; a candidate it lacks is refused in one line."""

    def __init__(self, rows: list[dict[str, Any]], where: str) -> None:
        super().__init__((str(d["id"]), d) for d in rows)
        self.where = where

    def __missing__(self, key: str) -> dict[str, Any]:
        raise InputError(f"{self.where} lacks the candidate document {key!r}")


def _table(run: Path, meta: RunMeta, name: str, kind: str) -> dict[str, dict[str, Any]]:
    """A config's documents by id."""
    split = folder_split(kind)
    return _Documents(read_config_split(run, meta, name, split), f"{run}: {name}/{split}")


def _candidates(run: Path, meta: RunMeta, split: str) -> list[dict[str, list[str]]]:
    """Each query's candidates (the original's), positives and negatives apart."""
    queries = read_config_split(run, meta, "original", split)
    judged: dict[str, dict[str, int]] = {}
    for r in read_config_split(run, meta, "original", folder_split(f"qrels/{split}")):
        judged.setdefault(str(r["query-id"]), {})[str(r["corpus-id"])] = int(r["score"])
    ranked = {
        str(r["query-id"]): [str(d) for d in r["corpus-ids"]]
        for r in read_config_split(run, meta, "original", folder_split(f"top_ranked/{split}"))
    }
    out = []
    for q in queries:
        ids = ranked.get(str(q["id"]), [])
        relevant = judged.get(str(q["id"]), {})
        out.append(
            {
                "positive": [d for d in ids if relevant.get(d, 0) > 0],
                "negative": [d for d in ids if relevant.get(d, 0) <= 0],
            }
        )
    return out


def _metadata(
    info: ConfigRecord,
    model: str,
    dataset: str,
    source: Any,
    originals: list[dict[str, Any]],
    transformed: list[dict[str, Any]],
    kind: str,
    own_corpus: bool,
) -> dict[str, Any]:
    """The pair's metadata, in HTEB's key order: an imported config's own, else made from
    the run (counts from the records, the retry history unknown)."""
    transformation = HTEB_NAMES[str(info["transform"])]
    held = info.get("hteb")
    if held and held.get("transformation") == transformation:
        kept = {k: v for k, v in held.items() if k not in IMPORTED_KEYS}
        kept["generator_model"] = model
        return kept
    backend = info.get("backend") or {}
    fields = targeted_fields(kind, own_corpus)
    doc: dict[str, Any] = {
        "generator_model": model,
        "transformation": transformation,
        "dataset": dataset,
        "seed_transform": int(info.get("seed", 0)),
        "generation_datetime": None,
        "max_model_length": int(backend.get("num_ctx") or DEFAULT_CONTEXT),
        "max_tokens": int(info.get("max_new_tokens") or 512),
        "max_retries": max(int(info.get("max_attempts") or 1) - 1, 0),
        "generation_statistics": statistics(originals, transformed, fields),
    }
    revision = source.get("revision")
    if isinstance(revision, str) and len(revision) == 40:
        doc["source_revision"] = revision
    if transformation == "translation":
        doc["translation_language_selection"] = "dataset"
    if kind == "reranking":
        doc["transform_corpus"] = own_corpus
    return doc


def _write_pair(
    root: Path, doc: dict[str, Any], originals: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> Path:
    """One pair as HTEB writes it: two struct columns of one type, no schema metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    model, transformation = doc["generator_model"], doc["transformation"]
    dataset, seed = doc["dataset"], doc["seed_transform"]
    folder = root / generator_directory(model) / dataset / transformation / str(seed)
    folder.mkdir(parents=True)
    data, metadata = pair_names(model, transformation, dataset, seed, doc["generation_datetime"])
    kind = pa.array(originals).type
    table = pa.table(
        {
            "original": pa.array(originals, type=kind),
            f"{transformation}_seed_{seed}": pa.array(rows, type=kind),
        }
    )
    pq.write_table(table.replace_schema_metadata(None), folder / data, compression="zstd")
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    (folder / metadata).write_text(text, encoding="utf-8")
    return folder
