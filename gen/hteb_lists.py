"""HTEB's reranking and summarisation files as a run folder's configs (`hteb import`).

A reranking file becomes a self-contained Reranking run: its records are the queries
(split `test`: `id` is the record's `_id`, else its position; `text` its query; any other
field of the record kept), and each candidate of each record is a document of its own
(`corpus.test`, id `<query id>:p<n>` or `<query id>:n<n>`), judged relevant to its query
when it is a positive (`qrels.test`) and listed among the query's candidates, positives
first (`top_ranked.test`). HTEB's generator rewrites each candidate slot on its own, so a
document per slot keeps each rewrite beside its own original. A pair whose metadata says
`transform_corpus` gives its config its own `corpus.test`, rewritten; any other pair is
scored on the original's documents, as HTEB scores it.

A summarisation file becomes a Summarization run whose rows are its records, both lists
of summaries rewritten (the hteb protocol's `references` part).

Every text has its own status (`status_<field>`, a list for a list): `fallback` where
HTEB's file holds it empty, `identical` where it holds its input, else `ok`; the row's
status names its first failed text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from shiftbench.core.data.hteb import TRANSFORMATIONS, Pair
from shiftbench.core.data.hteb_lists import (
    CANDIDATES,
    SUMMARY_FIELDS,
    check_pair,
    slot_languages,
    slot_pairs,
    text_status,
)
from shiftbench.core.data.parts import REFERENCES, folder_split, with_parts
from shiftbench.core.data.runfolder import ConfigData
from shiftbench.core.data.sources import Source, source_meta
from shiftbench.core.protocols import RANKING_PARTS
from shiftbench.core.records import DataRow, RunExtras, SourceRecord
from shiftbench.errors import InputError
from shiftbench.gen.configs import original_config
from shiftbench.gen.hteb_imported import (
    TRANSLATING,
    finish_row,
    hteb_protocol,
    pair_config,
    recorded_language,
)

LISTED = ("Reranking", "Summarization")
HTEB_TYPES = {"Reranking": "reranking", "Summarization": "summarisation"}
KEPT_OUT = ("query", *CANDIDATES, "language")  # a reranking record's fields a row renames


def listed_run(
    dataset: str, source: Source, recorded: SourceRecord, read: list[tuple[Pair, Any, Any]]
) -> tuple[SourceRecord, list[ConfigData], RunExtras]:
    """The source record, configs and run extras of an import of `read` (each pair with
    its original and transformed records, the originals the same in every pair)."""
    kind = HTEB_TYPES[source.task_type]
    for pair, originals, transformed in read:
        check_pair(originals, transformed, kind, _corpus(pair), pair.data)
    originals, where = read[0][1], read[0][0].data
    split = source.splits[0]
    for i, record in enumerate(originals):
        if str(record.get("_hteb_split") or split) != split:
            raise InputError(
                f"{where}: record {i} is of split {record['_hteb_split']!r}; a "
                f"{source.task_type} dataset has {split}"
            )
    rewrite: tuple[str, ...] = ("queries",)
    if source.task_type == "Summarization":
        rewrite = ("queries", REFERENCES)
        source = with_parts(source, rewrite)
    elif any(_corpus(pair) for pair, _, _ in read):
        rewrite = RANKING_PARTS
    kept = {k: v for k, v in recorded.items() if k in _KEEP}
    recorded = cast(SourceRecord, {**source_meta(source), **kept})
    recorded["subsets"] = ["default"]
    language = recorded_language(recorded, "default")
    if source.task_type == "Reranking":
        splits = _ranking_splits(originals, split, where)
    else:
        splits = {split: [{"row_id": i, **_fields(r)} for i, r in enumerate(originals)]}
    configs = [original_config(splits)]
    for pair, _, transformed in read:
        configs.append(_variant(pair, dataset, source, splits, originals, transformed, language))
    recorded["splits"] = [split]
    protocol = hteb_protocol((p for p, _, _ in read), source.task_type)
    protocol["rewrite"] = list(rewrite)
    top: RunExtras = {"protocol": protocol}
    if rewrite != ("queries",):
        top["rewrite"] = list(rewrite)
    return recorded, configs, top


# what import_hteb recorded beyond the source's own record
_KEEP = ("dataset_path", "revision", "row_limit")


def _corpus(pair: Pair) -> bool:
    return bool(pair.metadata.get("transform_corpus"))


def _fields(record: DataRow) -> dict[str, object]:
    return {k: v for k, v in record.items() if not k.startswith("_hteb_") and k != "language"}


def query_id(record: DataRow, index: int) -> str:
    """A reranking record's query id: its `_id`, else its position."""
    return str(record["_id"]) if record.get("_id") is not None else str(index)


def _ranking_splits(records: list[DataRow], split: str, where: Path) -> dict[str, list[DataRow]]:
    """The queries, documents, judgements and candidates of a reranking file."""
    queries: list[DataRow] = []
    corpus: list[DataRow] = []
    qrels: list[DataRow] = []
    ranked: list[DataRow] = []
    for i, record in enumerate(records):
        qid = query_id(record, i)
        if any(q["id"] == qid for q in queries):
            raise InputError(f"{where}: record {i} repeats the query id {qid!r}")
        extra = {k: v for k, v in _fields(record).items() if k not in KEPT_OUT}
        queries.append({"row_id": i, "id": qid, "text": record["query"], **extra})
        ids = []
        for key in CANDIDATES:
            for j, text in enumerate(record[key]):
                doc = f"{qid}:{key[0]}{j}"
                corpus.append({"row_id": len(corpus), "id": doc, "text": text})
                ids.append(doc)
                if key == "positive":
                    qrels.append({"query-id": qid, "corpus-id": doc, "score": 1})
        ranked.append({"query-id": qid, "corpus-ids": ids})
    return {
        split: queries,
        folder_split(f"corpus/{split}"): corpus,
        folder_split(f"qrels/{split}"): qrels,
        folder_split(f"top_ranked/{split}"): ranked,
    }


def _variant(
    pair: Pair,
    dataset: str,
    source: Source,
    splits: dict[str, list[DataRow]],
    originals: list[DataRow],
    transformed: list[DataRow],
    language: str | None,
) -> ConfigData:
    """One pair as a transform config: each rewritten text beside its original, with its
    own status and language."""
    ours = TRANSFORMATIONS[pair.transformation]
    split = source.splits[0]
    reranking = source.task_type == "Reranking"
    fields = ("query", *(CANDIDATES if _corpus(pair) else ())) if reranking else SUMMARY_FIELDS
    translated = None
    if ours in TRANSLATING:
        translated = slot_languages(
            originals, fields, pair.transformation, dataset, pair.seed, language
        )
    targets: set[str] = set()

    def outcome(i: int, field: str) -> tuple[list[str], list[str], list[Any]]:
        """A field's texts, statuses and languages as the run folder keeps them."""
        made = slot_pairs(originals[i][field], transformed[i].get(field), pair.data, i, field)
        texts, statuses, languages = [], [], []
        for j, (before, after) in enumerate(made):
            status, text = text_status(before, after)
            texts.append(text)
            statuses.append(status)
            drawn = translated[(i, field, j)] if translated else language
            languages.append(drawn)
            if translated and drawn:
                targets.add(str(drawn))
        return texts, statuses, languages

    out: dict[str, list[DataRow]] = {split: []}
    if reranking:
        documents = iter(splits[folder_split(f"corpus/{split}")])
        corpus = []
        for i, query in enumerate(splits[split]):
            (text,), (status,), (drawn,) = outcome(i, "query")
            row = {**query, "text": text, "original_text": query["text"]}
            row.update(language_text=drawn, status_text=status)
            out[split].append(finish_row(row, [status], ours))
            for key in CANDIDATES if _corpus(pair) else ():
                for text, status, drawn in zip(*outcome(i, key), strict=True):
                    doc = next(documents)
                    row = {**doc, "text": text, "original_text": doc["text"]}
                    row.update(language_text=drawn, status_text=status)
                    corpus.append(finish_row(row, [status], ours))
        if _corpus(pair):
            out[folder_split(f"corpus/{split}")] = corpus
    else:
        for i, original in enumerate(splits[split]):
            row, statuses = dict(original), []
            for field in source.text_fields:
                texts, own, languages = outcome(i, field)
                row[field] = texts
                row[f"original_{field}"] = original[field]
                row[f"language_{field}"] = languages
                row[f"status_{field}"] = own
                statuses += own
            out[split].append(finish_row(row, statuses, ours))
    per_field = {f: language for f in source.text_fields}
    return pair_config(pair, "default", out, language, per_field, targets)
