"""HTEB's side of the reranking and summarisation round trips, worked out in the tests:
its writer's statistics and filter report, its loader's checks and its restoration of
the texts its generator gave up on (re-derived from its rules, not shiftbench's code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from support.hteb import write_pair


def _blank(text: Any) -> bool:
    return text is None or (isinstance(text, str) and not text.strip())


def texts_of(record: dict, fields: tuple[str, ...]) -> list[tuple[str, int, str]]:
    """(field, position, text) of every text of `fields`, record order."""
    out = []
    for field in fields:
        value = record[field]
        for j, text in enumerate(value if isinstance(value, list) else [value]):
            out.append((field, j, text))
    return out


def writer_statistics(originals: list[dict], rewritten: list[dict], fields: tuple[str, ...]):
    """What HTEB's writer counts for a stored pair: non-blank original texts, those
    written empty, those written back as they were, and their records."""
    targeted, fell = set(), set()
    total = fallback = unchanged = 0
    for i, (before, after) in enumerate(zip(originals, rewritten, strict=True)):
        for field, j, text in texts_of(before, fields):
            if not text.strip():
                continue
            value = after[field]
            new = (value[j] if j < len(value) else None) if isinstance(value, list) else value
            targeted.add(i)
            total += 1
            if _blank(new):
                fallback += 1
                fell.add(i)
            elif new == text:
                unchanged += 1
    return {
        "records_total": len(originals),
        "records_targeted": len(targeted),
        "text_fields_total": total,
        "records_with_fallback": len(fell),
        "text_fields_with_fallback": fallback,
        "unchanged_outputs": unchanged,
        "retried_text_fields": fallback,
        "recovered_after_retry_text_fields": 0,
        "fallback_reasons": {"invalid_text_after_retries": fallback} if fallback else {},
    }


def filter_report(task_type: str, n: int) -> dict:
    """HTEB's data_filtering for stored records it kept all of."""
    return {
        "version": 2,
        "task_type": task_type,
        "input_scope": "stored_records",
        "counts_before": {"records": n},
        "counts_after": {"records": n},
        "excluded": [],
        "excluded_documents": [],
        "excluded_candidates": [],
    }


def write_hteb_pair(root, dataset, transformation, seed, originals, rewritten, fields, **extra):
    """A pair as HTEB's writer stores it, its statistics counted over `fields`."""
    task = "reranking" if "query" in originals[0] else "summarisation"
    return write_pair(
        root, dataset, transformation, seed, originals, rewritten,
        stats=writer_statistics(originals, rewritten, fields),
        data_filtering=filter_report(task, len(originals)), **extra,
    )  # fmt: skip


def restore(before: Any, after: Any) -> Any:
    """HTEB's restoration: a blank rewrite (or a wholly missing list) takes its original,
    text by text."""
    if isinstance(before, str):
        return before if _blank(after) and before.strip() else after
    if _blank(after) or after == []:
        return list(before)
    assert len(after) == len(before)
    return [restore(b, a) for b, a in zip(before, after, strict=True)]


def hteb_load(data: Path, fields: tuple[str, ...]) -> tuple[list[dict], list[dict]]:
    """A pair's two columns as HTEB's loader reads them: its original records checked
    (texts where texts belong, candidate lists of the same length in both columns, no
    record its filter would drop), and the rewritten records restored."""
    table = pq.read_table(data)
    assert table.schema.metadata is None
    assert table.column_names[0] == "original" and len(table.column_names) == 2
    originals, rewritten = (table.column(c).to_pylist() for c in table.column_names)
    restored = []
    for before, after in zip(originals, rewritten, strict=True):
        new = dict(after)
        for field in fields:
            value = before[field]
            if isinstance(value, list):
                assert all(isinstance(t, str) for t in value)
            else:
                assert isinstance(value, str) and value.strip()
            if field in ("positive", "negative"):
                assert value and len(after[field]) == len(value)
            new[field] = restore(value, after[field])
        restored.append(new)
    return originals, restored
