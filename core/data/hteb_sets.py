"""HTEB's nested clustering and multilingual datasets: what their records hold.

Nested clustering (BiorxivClusteringS2S, MedrxivClusteringS2S, TwentyNewsgroupsClustering,
PlscClusteringS2S.v2): each record is one set to cluster, a list of texts in `sentences`
and their labels in `labels`, one text rewritten at a time. HTEB's loader refuses a pair
whose records are not sets (a text where a list belongs), whose labels do not match its
texts one for one, whose original holds an empty text or an empty set, or whose rewritten
set, once each empty text is put back by its original, is not as long as its labels.

Multilingual datasets with language configs (IndicCrosslingualSTS, sts17-crosslingual-sts,
rte3, semrel2024): HTEB reads every config of the dataset one after another into one file,
each record's `language` naming its config; shiftbench keeps one subset per config, and
`--protocol hteb` scores them pooled, as HTEB does. SemRel2024's score is `label` in
HTEB's records (it reads the Hub's own columns) and `score` in a run folder.

gen/hteb.py imports and cards/hteb.py exports with these rules; core/data/hteb.py holds
the rest.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from shiftbench.core.data.listfields import field_texts, regrouped
from shiftbench.core.data.runfolder import FALLBACK, IDENTICAL, OK
from shiftbench.core.records import DataRow
from shiftbench.errors import InputError

# HTEB's record field -> the run folder's, per dataset (HTEB reads the Hub's own columns)
RENAMED: dict[str, dict[str, str]] = {"semrel2024": {"label": "score"}}


def to_run(dataset: str, record: DataRow) -> dict[str, Any]:
    """A record's fields under the run folder's names, in the same order."""
    names = RENAMED.get(dataset, {})
    return {names.get(k, k): v for k, v in record.items()}


def to_hteb(dataset: str, record: DataRow) -> dict[str, Any]:
    """A run-folder record's fields under HTEB's names, in the same order."""
    names = {ours: theirs for theirs, ours in RENAMED.get(dataset, {}).items()}
    return {names.get(k, k): v for k, v in record.items()}


def ordered(record: DataRow, keys: list[str] | None) -> dict[str, Any]:
    """The record with its keys in `keys`' order (the order an imported file had)."""
    if not keys or set(keys) != set(record):
        return record
    return {k: record[k] for k in keys}


def as_hteb(
    layout: str | None,
    originals: list[DataRow],
    transformed: list[DataRow],
    keys: list[str] | None,
    run: Path,
) -> tuple[list[DataRow], list[DataRow]]:
    """A run's records as HTEB's file holds them: an imported pair's fields in its file's
    order (`keys`); for a nested dataset whose rows hold one text each (a run gen made from
    mteb's rows), every row made one set (`sentences`, `labels`, then `language` and
    `_hteb_split`), as HTEB's loader groups such rows from the Hub."""
    originals = [ordered(r, keys) for r in originals]
    transformed = [ordered(r, keys) for r in transformed]
    if layout != "nested" or not originals or isinstance(originals[0].get("sentences"), list):
        return originals, transformed
    extra = sorted({k for r in originals for k in r} - {*SET_KEYS, "language", "_hteb_split"})
    if extra:
        raise InputError(
            f"{run}: HTEB makes one set of a nested dataset's rows only when they hold no "
            f"other field; the rows hold {', '.join(extra)}"
        )
    return _one_set(originals), _one_set(transformed)


SET_KEYS = ("sentences", "labels")


def _one_set(records: list[DataRow]) -> list[DataRow]:
    first = records[0]
    whole = {k: [r[k] for r in records] for k in SET_KEYS}
    return [{**whole, **{k: first[k] for k in ("language", "_hteb_split") if k in first}}]


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def check_records(
    dataset: str,
    layout: str | None,
    fields: tuple[str, ...],
    originals: list[DataRow],
    transformed: list[DataRow],
    where: Path,
) -> None:
    """A pair's records checked as HTEB's loader checks them: for nested clustering,
    sets of texts with labels one for one, before and after HTEB puts back the empty
    texts; for any other dataset shiftbench reads, one text per field."""
    for side, records in (("original", originals), ("rewritten", transformed)):
        for i, record in enumerate(records):
            for field in fields:
                value = record.get(field)
                # a rewritten set that is missing altogether is put back whole
                missing = side == "rewritten" and value is None
                if layout == "nested" and not isinstance(value, list) and not missing:
                    raise InputError(
                        f"{where}: {side} record {i}: {field} must be a list of texts, as "
                        f"{dataset}'s clustering_format 'nested' has it"
                    )
                if layout != "nested" and isinstance(value, list):
                    raise InputError(
                        f"{where}: {side} record {i}: {field} holds a list; shiftbench reads "
                        f"one text per {field} in {dataset}"
                    )
    if layout != "nested":
        return
    for i, (before, after) in enumerate(zip(originals, transformed, strict=True)):
        for field in fields:
            labels = before.get("labels", before.get("label"))
            texts, rewritten = before[field], after[field]
            if not isinstance(labels, list) or len(labels) != len(texts):
                raise InputError(
                    f"{where}: record {i}: its labels must be a list as long as {field} "
                    f"({len(texts)})"
                )
            if not texts or any(_blank(t) for t in texts):
                raise InputError(f"{where}: record {i}: {field} holds an empty text or none")
            if rewritten and len(rewritten) != len(texts):
                raise InputError(
                    f"{where}: rewritten record {i}: {field} holds {len(rewritten)} texts, "
                    f"its labels {len(texts)}"
                )


def text_outcomes(before: Any, after: Any) -> tuple[Any, Any, list[str]]:
    """A rewritten field as HTEB's file holds it, as a variant row keeps it: (its text or
    texts, empty where HTEB's generator gave up; each text's status; the statuses as a
    list). An empty rewritten set is every text given up."""
    listed = isinstance(before, list)
    olds = field_texts(before)
    news = list(after) if listed and isinstance(after, list) and after else [None] * len(olds)
    if not listed:
        news = [after]
    texts: list[Any] = []
    statuses: list[str] = []
    for old, new in zip(olds, news, strict=True):
        if _blank(new):
            texts.append("")
            statuses.append(FALLBACK)
        else:
            texts.append(new)
            statuses.append(IDENTICAL if new == old else OK)
    return regrouped(before, texts), regrouped(before, statuses), statuses


def listed_languages(
    records: list[DataRow],
    fields: tuple[str, ...],
    transformation: str,
    seed: int,
    pool: tuple[str, ...],
    shared: str,
) -> dict[tuple[int, str], Any]:
    """Where HTEB's translation or cross_translation sent each text of records whose
    fields are lists: a list per (record, field), None for an empty text. HTEB numbers
    every non-empty text of every set, record by record; `shared` is translation's one
    language, `pool` the languages cross_translation draws from."""
    out: dict[tuple[int, str], Any] = {}
    ordinal = 0
    for i, record in enumerate(records):
        for field in fields:
            languages: list[str | None] = []
            for text in field_texts(record.get(field)):
                if not isinstance(text, str) or not text.strip():
                    languages.append(None)
                    continue
                if transformation == "translation":
                    languages.append(shared)
                else:
                    languages.append(random.Random(seed + ordinal).choice(pool))
                ordinal += 1
            out[(i, field)] = regrouped(record.get(field), languages)
    return out


def language_order(
    records: list[DataRow], configs: tuple[str, ...], where: Path
) -> dict[str, list[int]]:
    """The positions of each config's records, for a dataset HTEB reads config by config:
    every record's `language` one of `configs`, and the configs one after another in
    that order, as HTEB writes them."""
    found: dict[str, list[int]] = {}
    last = -1
    for i, record in enumerate(records):
        label = record.get("language")
        if label not in configs:
            raise InputError(
                f"{where}: record {i} has language {label!r}, not one of the dataset's "
                f"configs ({', '.join(configs)})"
            )
        rank = configs.index(label)
        if rank < last:
            raise InputError(
                f"{where}: record {i} ({label}) comes after records of "
                f"{configs[last]}; HTEB writes the configs one after another, in the "
                f"order {', '.join(configs)}"
            )
        last = rank
        found.setdefault(str(label), []).append(i)
    return found
