"""HTEB's numbering of a dataset's texts: the slots its generator sends, in its order.

HTEB (v1.1) sends every non-blank text of every record on its own, record by record and
field by field (for a pair task every first text, then every second), a ranking
document's title apart from its body, a reranking record's query before its relevant
and then its other candidates, a summarisation record's human summaries before its
machine summaries; each non-blank text gets the next ordinal, counted across all of a
dataset's subsets, which its language draws are seeded with (gen/hteb_requests.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from shiftbench.core.data.hteb import PAIR_TASKS
from shiftbench.core.data.listfields import field_texts
from shiftbench.core.records import DataRow
from shiftbench.core.text.languages import Language

if TYPE_CHECKING:
    from shiftbench.core.data.sources import Source

CORPUS_SPLIT = "corpus."  # a ranking corpus's run-folder split (corpus.<split>)
TITLE = "title"
HUMAN = "human_summaries"  # HTEB sends a record's human summaries first


@dataclass(frozen=True)
class Slot:
    """One text HTEB sends: where it sits, its ordinal and the language it is in."""

    split: str
    row: int
    field: str
    item: int  # its place in a list-valued field (0 for a plain text)
    text: str
    ordinal: int | None  # None for a blank text, which is never sent
    language: Language | None


def slots(
    rewritten: Mapping[str, list[DataRow]],
    fields: tuple[str, ...],
    languages: tuple[Language | None, ...],
    pair_task: bool,
    start: int = 0,
) -> list[Slot]:
    """Every text slot in HTEB's order, numbered from `start` (the non-blank texts of the
    dataset's earlier subsets): record by record, a record's fields in turn; for a pair
    task every record's first text, then every record's second. A ranking document's
    title is a text of its own, before its body, as HTEB sends it."""
    rows = [(split, i, row) for split, table in rewritten.items() for i, row in enumerate(table)]
    language = dict(zip(fields, languages, strict=True))
    if pair_task:
        order = [(f, entry) for f in fields for entry in rows]
    else:
        order = [(f, entry) for entry in rows for f in row_fields(entry[0], entry[2], fields)]
    numbered = _Numbered(start)
    for f, (split, i, row) in order:
        for item, text in enumerate(field_texts(row[f])):
            numbered.add(Slot(split, i, f, item, text, None, language.get(f, languages[0])))
    return numbered.out


class _Numbered:
    """Slots numbered as HTEB numbers them: each non-blank text its ordinal, from `start`."""

    def __init__(self, start: int) -> None:
        self.count = start
        self.out: list[Slot] = []

    def add(self, slot: Slot) -> None:
        ordinal = self.count if slot.text.strip() else None
        self.count += ordinal is not None
        self.out.append(replace(slot, ordinal=ordinal))


def reranking_slots(
    source: Source,
    rewritten: Mapping[str, list[DataRow]],
    context: Mapping[str, list[DataRow]],
    language: Language | None,
    start: int = 0,
) -> list[Slot]:
    """A reranking subset's slots as HTEB's generator sends them when it rewrites the
    candidates too: HTEB makes one record per query (its candidates in their list's order,
    the judged-relevant ones `positive`, the rest `negative`, each its title and body
    joined by a space) and sends, record by record, the query, each positive, each
    negative. A document among two queries' candidates is two slots; a corpus document
    among none is not sent."""
    numbered = _Numbered(start)
    for split in source.splits:
        corpus = f"{CORPUS_SPLIT}{split}"
        where = {str(d["id"]): i for i, d in enumerate(rewritten[corpus])}
        relevant = {
            (str(r["query-id"]), str(r["corpus-id"]))
            for r in context.get(f"qrels.{split}", [])
            if r["score"] > 0
        }
        ranked = {
            str(r["query-id"]): r["corpus-ids"] for r in context.get(f"top_ranked.{split}", [])
        }
        for i, query in enumerate(rewritten[split]):
            numbered.add(Slot(split, i, "text", 0, query["text"], None, language))
            candidates = [str(d) for d in ranked.get(str(query["id"]), [])]
            for positive in (True, False):
                for doc in candidates:
                    if ((str(query["id"]), doc) in relevant) != positive:
                        continue
                    row = rewritten[corpus][where[doc]]
                    title, body = row.get(TITLE) or "", row["text"] or ""
                    text = f"{title} {body}" if title else body
                    numbered.add(Slot(corpus, where[doc], "text", 0, text, None, language))
    return numbered.out


def subset_slots(
    source: Source,
    rewritten: Mapping[str, list[DataRow]],
    context: Mapping[str, list[DataRow]],
    languages: tuple[Language | None, ...],
    start: int = 0,
) -> list[Slot]:
    """A subset's slots in HTEB's record order, numbered from `start`: a classification's
    train split before its evaluation split, a ranking corpus before its queries (a
    reranking subset with its corpus: per query, as reranking_slots says), a
    summarisation record's human summaries before its machine summaries."""
    ordered = {s: rows for s, rows in rewritten.items() if s not in source.splits}
    ordered.update({s: rows for s, rows in rewritten.items() if s in source.splits})
    fields = source.text_fields
    if source.task_type == "Reranking" and any(s.startswith(CORPUS_SPLIT) for s in ordered):
        return reranking_slots(source, ordered, context, languages[0], start)
    if source.task_type == "Summarization":  # HTEB's field order, each with its language
        paired = sorted(zip(fields, languages, strict=True), key=lambda p: p[0] != HUMAN)
        fields, languages = tuple(f for f, _ in paired), tuple(lang for _, lang in paired)
    return slots(ordered, fields, languages, pair_task(source.task_type), start)


def row_fields(split: str, row: Mapping[str, Any], fields: tuple[str, ...]) -> tuple[str, ...]:
    """The fields HTEB rewrites in a row: a ranking document's title (when it has one)
    and its text; the task's text fields elsewhere."""
    if split.startswith(CORPUS_SPLIT) and isinstance(row.get(TITLE), str):
        return (TITLE, *fields)
    return fields


def nonblank(
    source: Source,
    rewritten: Mapping[str, list[DataRow]],
    context: Mapping[str, list[DataRow]],
) -> int:
    """How many texts of a subset HTEB numbers (its non-blank slots)."""
    languages = (None,) * len(source.text_fields)
    return sum(s.ordinal is not None for s in subset_slots(source, rewritten, context, languages))


def pair_task(task_type: str) -> bool:
    """Whether HTEB numbers the task's texts as pairs (every first text, then every second)."""
    return {"STS": "sts", "PairClassification": "pair_classification"}.get(task_type) in PAIR_TASKS
