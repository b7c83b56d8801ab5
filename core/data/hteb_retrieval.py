"""HTEB's retrieval files: corpus, queries and judgements in one list of records.

HTEB keeps a retrieval dataset's rewrite as one pair (core/data/hteb.py) whose records are
the documents, the queries and the relevance judgements (qrels) one after another, told
apart by `_hteb_part` (`corpus`, `queries`, `qrels`). Each record has its part's own
fields (`_id`, `title`, `text`; `_id`, `text`; `query-id`, `corpus-id`, `score`) and those
HTEB adds to every record (`_hteb_split`, the Hub split its part was read from;
`_hteb_part`; `language`); the other parts' fields are null, since all records share one
struct type. The queries are always rewritten; a document's title and text only when the
pair's metadata says `transform_corpus`. A blank text is never sent and stays as it was;
a text the generator gave up on is empty.

The stored records are those HTEB's data filter kept: a query whose text is blank, which
has no judgement, or one of whose judged documents is missing is left out with its
judgements, and the pair's `data_filtering` says what was left out and how many records
of each part there were before and after.

This module checks a pair's records as HTEB's loader checks them (ids, judgements, text
types, the filter report against the stored records, a rewrite that keeps every record's
identity), numbers the texts HTEB rewrote, and turns records into run-folder rows and
back. Names HTEB's loader also accepts but its writer never writes for its datasets
(`id`, `query`, `document`, `qid`, ...) are refused, so that what is read is written back
the same. It reads and writes no file: gen/hteb_retrieval.py imports, cards/hteb_retrieval.py
exports.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.core.records import DataRow
from shiftbench.errors import InputError

CORPUS, QUERIES, QRELS = "corpus", "queries", "qrels"
PARTS = (CORPUS, QUERIES, QRELS)
ADDED = ("_hteb_split", "_hteb_part", "language")  # what HTEB adds to every record
# the fields each part's records must hold, and the texts HTEB may rewrite in each
KEYS = {CORPUS: ("_id",), QUERIES: ("_id", "text"), QRELS: ("query-id", "corpus-id", "score")}
TEXTS = {CORPUS: ("title", "text"), QUERIES: ("text",), QRELS: ()}
# aliases HTEB's loader reads but its writer never writes for the datasets it ships
ALIASES = ("part", "split", "id", "document", "query", "query_id", "qid", "doc_id", "pid",
           "relevance", "lang", "languages")  # fmt: skip
RUN_ID = "id"  # a query's or document's id in a run folder (mteb's name)


@dataclass(frozen=True)
class Layout:
    """How a pair's records are laid out: the struct's fields in order, each part's
    `_hteb_split`, and the `language` every record carries."""

    fields: tuple[str, ...]
    splits: dict[str, str]
    language: str | None

    def record(self) -> dict[str, Any]:
        """As shiftbench.json keeps it."""
        return {"fields": list(self.fields), "splits": dict(self.splits), "language": self.language}

    @classmethod
    def from_record(cls, doc: dict[str, Any]) -> Layout:
        return cls(tuple(doc["fields"]), dict(doc["splits"]), doc.get("language"))


def _valid_id(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, str | int) and bool(str(value).strip())


def _integer(value: Any) -> bool:
    """Whether a relevance is a whole number, as HTEB's loader reads one."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return False
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return False
    return math.isfinite(number) and number.is_integer()


def blank(text: Any) -> bool:
    """Whether HTEB sends a text nowhere: it is not a string, or only spaces."""
    return not isinstance(text, str) or not text.strip()


def check_records(records: list[Any], where: Path) -> Layout:
    """A pair's original records checked as HTEB's loader checks them (its record
    structure, its data filter finding nothing left to leave out) and as its writer lays
    them out: parts in corpus, queries, qrels order, one split per part, one language."""
    if not records:
        raise InputError(f"{where}: holds no record")
    order = {part: i for i, part in enumerate(PARTS)}
    corpus: set[str] = set()
    queries: dict[str, int] = {}
    judged: dict[str, list[str]] = {}
    seen: set[tuple[str, str]] = set()
    splits: dict[str, str] = {}
    languages = set()
    last = 0
    for i, record in enumerate(records):
        at = f"{where}: record {i}"
        if not isinstance(record, dict) or not any(v is not None for v in record.values()):
            raise InputError(f"{at} is missing or empty")
        part = record.get("_hteb_part")
        if part not in order:
            raise InputError(f"{at}: _hteb_part must be corpus, queries or qrels, got {part!r}")
        if order[part] < last:
            raise InputError(f"{at}: a {part} record after the {PARTS[last]} ones; HTEB writes "
                             "corpus, queries and qrels one after another")  # fmt: skip
        last = order[part]
        alias = next((k for k in ALIASES if record.get(k) is not None), None)
        if alias is not None:
            raise InputError(f"{at}: holds {alias!r}, a name HTEB's writer does not use; "
                             f"its {part} records hold {', '.join(KEYS[part])}")  # fmt: skip
        split = record.get("_hteb_split")
        if not isinstance(split, str) or splits.setdefault(part, split) != split:
            raise InputError(f"{at}: _hteb_split {split!r}, where the {part} records before "
                             f"it have {splits[part]!r}")  # fmt: skip
        languages.add(record.get("language"))
        if len(languages) > 1:
            raise InputError(f"{at}: language {record.get('language')!r}, where the records "
                             "before it have another")  # fmt: skip
        for key in KEYS[part][: 2 if part == QRELS else 1]:
            if not _valid_id(record.get(key)):
                raise InputError(f"{at}: {key} must be a non-empty string or whole number")
        for key in TEXTS[part]:
            if record.get(key) is not None and not isinstance(record[key], str):
                raise InputError(f"{at}: {key} must be text, not {type(record[key]).__name__}")
        if part == CORPUS:
            if record.get("text") is None:
                raise InputError(f"{at}: a document without text")
            if str(record["_id"]) in corpus:
                raise InputError(f"{at}: document id {record['_id']!r} is used twice")
            corpus.add(str(record["_id"]))
        elif part == QUERIES:
            if str(record["_id"]) in queries:
                raise InputError(f"{at}: query id {record['_id']!r} is used twice")
            queries[str(record["_id"])] = i
        else:
            if not _integer(record.get("score")):
                raise InputError(f"{at}: score must be a whole number, got {record.get('score')!r}")
            pair = (str(record["query-id"]), str(record["corpus-id"]))
            if pair in seen:
                raise InputError(f"{at}: query {pair[0]!r} judges document {pair[1]!r} twice")
            seen.add(pair)
            if pair[0] not in queries:
                raise InputError(f"{at}: judges query {pair[0]!r}, which is not a query")
            judged.setdefault(pair[0], []).append(pair[1])
    missing = [p for p in PARTS if p not in splits]
    if missing:
        raise InputError(f"{where}: holds no {' or '.join(missing)} record")
    for query, index in queries.items():
        lost = sorted(set(judged.get(query, [])) - corpus)
        why = (
            "has a blank text" if blank(records[index].get("text"))
            else f"judges documents not in the corpus ({', '.join(lost)})" if lost
            else "has no judgement" if query not in judged
            else None
        )  # fmt: skip
        if why:
            raise InputError(
                f"{where}: record {index}: query {query!r} {why}, so HTEB's data filter "
                "leaves it out; HTEB's generator stores only the records its filter keeps"
            )
    fields = tuple(dict.fromkeys(k for r in records for k in r))
    return Layout(fields, splits, next(iter(languages)))


def part_counts(records: list[DataRow]) -> dict[str, int]:
    """HTEB's record counts of a filter report: all records, and each part's."""
    parts = Counter(r.get("_hteb_part") for r in records)
    return {"records": len(records), **{p: parts[p] for p in PARTS}}


def check_filter_report(report: dict[str, Any], records: list[DataRow], where: Path) -> None:
    """A retrieval pair's `data_filtering` as HTEB's loader checks it beyond what every
    task's report is checked for (core/data/hteb.py check_filtering): counts that add up,
    exclusions of HTEB's shape that account for the counts, and counts after the filter
    that are the stored records', none of the left-out queries or documents among them."""

    def refuse(problem: str) -> None:
        raise InputError(f"{where}: data_filtering: {problem}")

    before, after = report["counts_before"], report["counts_after"]
    for counts in (before, after):
        if counts["records"] != sum(counts[p] for p in PARTS):
            refuse("records must be corpus, queries and qrels added up")
    excluded, documents = report["excluded"], report.get("excluded_documents", [])
    if report.get("excluded_candidates"):
        refuse("a retrieval dataset has no candidates to exclude")
    rows: set[Any] = set()
    query_ids: set[str] = set()
    for item in excluded:
        if not isinstance(item, dict) or set(item) != {
            "row_index", "reason", "query_id", "missing_document_ids"
        }:  # fmt: skip
            refuse("an excluded query must hold row_index, reason, query_id, missing_document_ids")
        index, query, lost = item["row_index"], item["query_id"], item["missing_document_ids"]
        if type(index) is not int or not 0 <= index < before["records"] or index in rows:
            refuse(f"excluded row_index {index!r} is out of range or repeated")
        rows.add(index)
        if blank(query) or not isinstance(lost, list) or any(blank(d) for d in lost):
            refuse("an excluded query's ids must be non-empty strings")
        fits = item["reason"] == ("missing_documents" if lost else "no_judgments")
        if not fits and not (report["version"] == 2 and item["reason"] == "empty_text"):
            refuse(f"query {query!r} is excluded for {item['reason']!r}, which its ids do not bear")
        if query in query_ids or len(set(lost)) != len(lost):
            refuse(f"query {query!r} or one of its missing documents is named twice")
        query_ids.add(query)
    document_ids: set[str] = set()
    for item in documents:
        if not isinstance(item, dict) or set(item) != {"row_index", "document_id", "reason"}:
            refuse("an excluded document must hold row_index, document_id, reason")
        index, doc = item["row_index"], item["document_id"]
        placed = type(index) is int and 0 <= index < before["records"] and index not in rows
        if not placed or blank(doc) or doc in document_ids or item["reason"] != "empty_text":
            refuse(f"excluded document {doc!r} is not one HTEB's filter could leave out")
        rows.add(index)
        document_ids.add(doc)
    if before["queries"] - after["queries"] != len(excluded):
        refuse("the queries left out do not account for the query counts")
    if not excluded and not documents and before != after:
        refuse("the counts changed though nothing was left out")
    if before["corpus"] - after["corpus"] != len(documents):
        refuse("the documents left out do not account for the corpus counts")
    if not excluded and before["qrels"] != after["qrels"]:
        refuse("the judgements changed though no query was left out")
    held = part_counts(records)
    if after != held:
        shown = ", ".join(f"{k} {v}" for k, v in held.items())
        refuse(f"its counts after filtering differ from the stored records ({shown})")
    ids = {p: {str(r.get("_id")) for r in records if r.get("_hteb_part") == p} for p in PARTS}
    if query_ids & ids[QUERIES] or document_ids & ids[CORPUS]:
        refuse("a query or document it left out is among the stored records")


def targets(records: list[DataRow], transform_corpus: bool) -> dict[tuple[int, str], int | None]:
    """The texts HTEB's generator was given, keyed by (record, field), in its order
    (record by record, a document's title before its text), each with its ordinal among
    the non-blank ones (None for a blank text, which it sends nowhere)."""
    out: dict[tuple[int, str], int | None] = {}
    count = 0
    for i, record in enumerate(records):
        part = str(record.get("_hteb_part"))
        if part == QRELS or (part == CORPUS and not transform_corpus):
            continue
        for field in TEXTS[part]:
            if record.get(field) is None:
                continue
            out[(i, field)] = None if blank(record[field]) else count
            count += not blank(record[field])
    return out


def check_rewrite(
    originals: list[DataRow],
    transformed: list[Any],
    transform_corpus: bool,
    where: str,
) -> None:
    """A pair's rewritten records as HTEB's loader reads them, and as its writer makes
    them: each record whole, each rewritten text a string or null, and every other field
    (ids, judgements, split, language, a document HTEB was not asked to rewrite) the
    original's."""
    rewritable = targets(originals, True)
    for i, (before, after) in enumerate(zip(originals, transformed, strict=True)):
        at = f"{where}: record {i}"
        if not isinstance(after, dict) or not any(v is not None for v in after.values()):
            raise InputError(f"{at} is missing or empty")
        for field in before:
            if (i, field) in rewritable and (transform_corpus or before["_hteb_part"] != CORPUS):
                if after.get(field) is not None and not isinstance(after[field], str):
                    raise InputError(f"{at}: {field} must be text or null")
            elif after.get(field) != before[field]:
                why = (
                    "transform_corpus is false" if (i, field) in rewritable
                    else "HTEB rewrites texts alone"
                )  # fmt: skip
                raise InputError(f"{at}: {field} differs from the original's, yet {why}")


def rows_of(records: list[DataRow]) -> dict[str, list[DataRow]]:
    """Each part's records as run-folder rows: `_id` as `id`, the fields HTEB adds left
    out (the layout keeps them), the other parts' fields too; documents and queries
    numbered by `row_id`."""
    own = {
        p: [k for r in records if r["_hteb_part"] == p for k, v in r.items()
            if v is not None and k not in ADDED]
        for p in PARTS
    }  # fmt: skip
    own = {p: list(dict.fromkeys(keys)) for p, keys in own.items()}
    out: dict[str, list[DataRow]] = {p: [] for p in PARTS}
    for record in records:
        part = record["_hteb_part"]
        row: DataRow = {} if part == QRELS else {"row_id": len(out[part])}
        for key in own[part]:
            row[RUN_ID if key == "_id" else key] = record.get(key)
        out[part].append(row)
    return out


def records_of(rows: dict[str, list[DataRow]], layout: Layout) -> list[DataRow]:
    """Run-folder rows (rows_of's) as HTEB's records, in the layout's field order."""
    out = []
    for part in PARTS:
        for row in rows[part]:
            record = dict.fromkeys(layout.fields)
            for key, value in row.items():
                if key != "row_id":
                    record["_id" if key == RUN_ID else key] = value
            record.update(
                _hteb_split=layout.splits[part], _hteb_part=part, language=layout.language
            )
            if list(record) != list(layout.fields):
                extra = sorted(set(record) - set(layout.fields))
                raise InputError(
                    f"a {part} row holds fields HTEB's records do not: {', '.join(extra)}"
                )
            out.append(record)
    return out


def derived_layout(
    rows: dict[str, list[DataRow]], splits: dict[str, str], language: str | None
) -> Layout:
    """The layout HTEB's loader gives rows read from the Hub: each part's fields in
    order of first appearance (`id` as `_id`), each followed by the fields HTEB adds."""
    fields: dict[str, None] = {}
    for part in PARTS:
        for row in rows[part]:
            for key in row:
                if key != "row_id":
                    fields.setdefault("_id" if key == RUN_ID else key)
            fields.update(dict.fromkeys(ADDED))
    return Layout(tuple(fields), splits, language)


# The Hub splits HTEB reads each part from (its dataset metadata's `components`): the
# corpus and queries from splits of their own, the judgements from the evaluation split,
# except where a dataset keeps all three under one split.
ONE_SPLIT = ("Ko-StrategyQA", "TwitterHjerneRetrieval")


def component_splits(dataset: str, split: str) -> dict[str, str]:
    """Each part's `_hteb_split` in HTEB's records of `dataset`, scored on `split`."""
    if dataset in ONE_SPLIT:
        return dict.fromkeys(PARTS, split)
    return {CORPUS: CORPUS, QUERIES: QUERIES, QRELS: split}
