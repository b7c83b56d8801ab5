"""HTEB's files of datasets whose records hold lists of texts: reranking and summarisation.

A reranking record is one query with its candidates: `query` (one text), `positive` and
`negative` (lists of texts), `_hteb_split` and `language`, and `_id` where HTEB built the
record from a dataset's corpus, queries, judgements and candidate lists. HTEB's generator
rewrites the query, and each candidate on its own too when the pair's metadata says
`transform_corpus`. A summarisation record holds `human_summaries` and `machine_summaries`
(lists of texts, both rewritten text by text) and a relevance score per machine summary.

In HTEB's transformed column a text its generator gave up on is empty (or null); a list
keeps its length. Its loader checks the original records first (a query is text, the
candidates lists of texts, no record without a query, a positive or a negative, since its
filter keeps none in its files; summaries non-empty lists of non-blank texts, a finite
relevance score per machine summary and two distinct scores in all), then that each
rewritten list has its original's length. This module holds those checks, each text's
status, the languages HTEB's translations sent each text into, and the statistics HTEB
counts for a pair; gen/hteb_lists.py imports, cards/hteb_lists.py exports.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shiftbench.core.data.hteb import (
    cross_translation_target,
    record_languages,
    stored_statistics,
    translation_target,
)
from shiftbench.core.data.runfolder import FALLBACK, IDENTICAL, OK
from shiftbench.core.records import DataRow
from shiftbench.errors import InputError

CANDIDATES = ("positive", "negative")
RERANKING_FIELDS = ("query", *CANDIDATES)
# HTEB's order of a summarisation record's rewritten fields (its text numbering follows it)
SUMMARY_FIELDS = ("human_summaries", "machine_summaries")
SCORE_KEYS = ("gold_scores", "scores", "relevance")


def targeted_fields(task_type: str, transform_corpus: bool) -> tuple[str, ...]:
    """The fields of a record HTEB's generator rewrites, in its order."""
    if task_type == "reranking":
        return RERANKING_FIELDS if transform_corpus else ("query",)
    return SUMMARY_FIELDS


def missing(text: Any) -> bool:
    """Whether HTEB reads a rewritten text as given up on: null or blank."""
    return text is None or (isinstance(text, str) and not text.strip())


def text_status(before: str, after: Any) -> tuple[str, str]:
    """A rewritten text's status and the text a run folder keeps: `fallback` and empty
    where HTEB gave up, `identical` where it wrote its input back, else `ok`."""
    if missing(after):
        return FALLBACK, ""
    return (IDENTICAL if after == before else OK), after


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(t, str) for t in value)


def check_originals(records: list[DataRow], task_type: str, where: Path) -> None:
    """The original records as HTEB's loader and filter accept them (module docstring)."""
    for i, record in enumerate(records):
        at = f"{where}: record {i}"
        if task_type == "reranking":
            if not isinstance(record.get("query"), str):
                raise InputError(f"{at}: query must be one text (shiftbench reads no query list)")
            if not record["query"].strip():
                raise InputError(f"{at}: the query is blank, which HTEB's filter keeps out")
            for key in CANDIDATES:
                if not _texts(record.get(key)):
                    raise InputError(f"{at}: {key} must be a list of texts")
                if not record[key]:
                    raise InputError(
                        f"{at}: no {key} candidate, which HTEB's filter keeps out of its files"
                    )
            continue
        for key in SUMMARY_FIELDS:
            value = record.get(key)
            if not _texts(value) or not value or any(not t.strip() for t in value):
                raise InputError(f"{at}: {key} must be a non-empty list of non-blank texts")
        scores = scores_of(record)
        if not isinstance(scores, list) or any(
            isinstance(s, bool) or not isinstance(s, int | float) or not math.isfinite(s)
            for s in scores
        ):
            raise InputError(f"{at}: relevance must be a list of finite numbers")
        if len(scores) != len(record["machine_summaries"]):
            raise InputError(
                f"{at}: {len(record['machine_summaries'])} machine summaries but "
                f"{len(scores)} relevance scores"
            )
    if task_type == "summarisation" and len({s for r in records for s in scores_of(r)}) < 2:
        raise InputError(f"{where}: the relevance scores must hold two distinct values")


def scores_of(record: DataRow) -> Any:
    """A summarisation record's scores: its first of HTEB's score keys."""
    return next((record[k] for k in SCORE_KEYS if k in record), None)


def slot_pairs(
    original: Any, rewritten: Any, where: Path, index: int, field: str
) -> list[tuple[str, Any]]:
    """Each text of a field with its rewrite (None where HTEB gave up on it): one text,
    or a list whose rewrite is a list of its length, or missing as a whole."""
    at = f"{where}: record {index}: {field}"
    if isinstance(original, str):
        if rewritten is not None and not isinstance(rewritten, str):
            raise InputError(f"{at}: the rewrite must be a text")
        return [(original, rewritten)]
    if missing(rewritten) or rewritten == []:
        return [(t, None) for t in original]
    if not isinstance(rewritten, list) or any(
        t is not None and not isinstance(t, str) for t in rewritten
    ):
        raise InputError(f"{at}: the rewrite must be a list of texts")
    if len(rewritten) != len(original):
        raise InputError(
            f"{at}: the rewrite holds {len(rewritten)} texts, the original {len(original)}"
        )
    return list(zip(original, rewritten, strict=True))


def check_pair(
    originals: list[DataRow],
    transformed: list[DataRow],
    task_type: str,
    transform_corpus: bool,
    where: Path,
) -> None:
    """A pair's records as HTEB's loader reads them: checked originals, and each rewritten
    field shaped as its original (candidate lists keep their length in any case)."""
    check_originals(originals, task_type, where)
    fields = RERANKING_FIELDS if task_type == "reranking" else SUMMARY_FIELDS
    for i, (before, after) in enumerate(zip(originals, transformed, strict=True)):
        for field in fields:
            if (
                task_type == "reranking"
                and field != "query"
                and not isinstance(after.get(field), list)
            ):
                raise InputError(f"{where}: record {i}: the rewritten {field} is not a list")
            slot_pairs(before[field], after.get(field), where, i, field)


def slots(records: list[DataRow], fields: tuple[str, ...]) -> Iterator[tuple[int, str, int, str]]:
    """Every text of `fields` in HTEB's order: (record, field, position in the field,
    text), record by record, field by field."""
    for i, record in enumerate(records):
        for field in fields:
            value = record[field]
            for j, text in enumerate(value if isinstance(value, list) else [value]):
                yield i, field, j, text


def slot_languages(
    records: list[DataRow],
    fields: tuple[str, ...],
    transformation: str,
    dataset: str,
    seed: int,
    default: str | None,
) -> dict[tuple[int, str, int], str | None]:
    """The language HTEB's `translation` or `cross_translation` sent each text into, keyed
    by (record, field, position): one language per dataset and seed, or one per text
    drawn from the seed plus the text's number among the non-blank texts; None for a
    blank text."""
    out: dict[tuple[int, str, int], str | None] = {}
    ordinal = 0
    for i, field, j, text in slots(records, fields):
        if not text.strip():
            out[(i, field, j)] = None
            continue
        own = record_languages(records[i].get("language"), None) or ((default,) if default else ())
        if transformation == "translation":
            out[(i, field, j)] = translation_target(dataset, seed, own)
        else:
            out[(i, field, j)] = cross_translation_target(seed, ordinal, own)
        ordinal += 1
    return out


def statistics(
    originals: list[DataRow], transformed: list[DataRow], fields: tuple[str, ...]
) -> dict[str, object]:
    """generation_statistics as HTEB counts a stored pair: the non-blank texts rewritten,
    those given up on (empty) and those written back unchanged, and their records; the
    retry history unknown."""
    targeted, with_fallback = set(), set()
    total = fallback = unchanged = 0
    for i, field, j, text in slots(originals, fields):
        if not text.strip():
            continue
        value = transformed[i][field]
        after = value[j] if isinstance(value, list) and value else value
        after = None if isinstance(value, list) and not value else after
        targeted.add(i)
        total += 1
        if missing(after):
            fallback += 1
            with_fallback.add(i)
        elif after == text:
            unchanged += 1
    return stored_statistics(
        len(originals), len(targeted), total, len(with_fallback), fallback, unchanged
    )
