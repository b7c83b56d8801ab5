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

from pathlib import Path
from typing import Any

from shiftbench.cards.hteb_pairs import (
    ConfigPair,
    generator_id,
    hteb_configs,
    hteb_language,
    kept_metadata,
    left_out,
    made_metadata,
    pair_folder,
    pinned,
    staged,
    write_checked,
)
from shiftbench.core.data.hteb import given_up
from shiftbench.core.data.hteb_lists import check_pair, statistics, targeted_fields
from shiftbench.core.data.listfields import field_texts
from shiftbench.core.data.parts import folder_split
from shiftbench.core.data.runfolder import read_config_split
from shiftbench.core.records import DataRow, RunMeta
from shiftbench.errors import InputError

LISTED = ("Reranking", "Summarization")


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
    chosen = hteb_configs(run, meta)
    imported = any("hteb" in c for c in chosen.values())
    language = hteb_language(source)
    originals = _records(run, meta, "original", split, reranking, imported, language, None)
    folders = []
    with staged(output) as stage:
        for name, info in chosen.items():
            model = generator_id(run, name, info, generator)
            own = reranking and folder_split(f"corpus/{split}") in info["rows"]
            transformed = _records(run, meta, name, split, reranking, imported, language,
                                   originals)  # fmt: skip
            kind = "reranking" if reranking else "summarisation"
            config = ConfigPair(name, info, model, originals, transformed)
            doc = _metadata(config, dataset, source, kind, own)
            pair = write_checked(stage, doc, config, run)
            check_pair(originals, transformed, kind, own, pair.data)
            folders.append(pair_folder(doc))
    return tuple(folders), left_out(meta, chosen)


def _text(row: DataRow, rewritten: bool) -> str:
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
    originals: list[DataRow] | None,
) -> list[DataRow]:
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

    def __init__(self, rows: list[DataRow], where: str) -> None:
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
    config: ConfigPair, dataset: str, source: Any, kind: str, own_corpus: bool
) -> dict[str, Any]:
    """The pair's metadata, in HTEB's key order: an imported config's own, else made from
    the run (counts from the records, the retry history unknown)."""
    kept = kept_metadata(config)
    if kept is not None:
        return kept
    counts = statistics(config.originals, config.transformed, targeted_fields(kind, own_corpus))
    doc = made_metadata(config, dataset, counts, pinned(source.get("revision")))
    if kind == "reranking":
        doc["transform_corpus"] = own_corpus
    return doc
