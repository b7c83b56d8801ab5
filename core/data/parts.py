"""What a run rewrites: the parts of a task type's data (`gen --rewrite`).

`queries` are the scored texts: a ranking task's queries, the evaluation split of every other
task type. `corpus` is a Retrieval or Reranking task's documents (a Reranking task's candidates
are corpus documents). `train` is a Classification task's train split. `references` is a
Summarization task's human summaries, which the machine summaries are scored against (HTEB's
release rewrites them with the machine summaries); they are a second text field of the same
rows, so the variant's rows hold both.

A ranking run that rewrites its corpus is self-contained: its original config holds the
corpus, the judgements and (Reranking) the candidates of each scored split as the splits
`corpus.<split>`, `qrels.<split>` and `top_ranked.<split>`, and each variant holds its
rewritten corpus as `corpus.<split>` (in shiftbench.json; the card lists each kind as a
config of its own, see runcard.card_configs). With a row limit N, the corpus keeps the documents
judged relevant to the kept queries (and, Reranking, their candidates) plus the first N
documents, in corpus order, so a small run stays small and every kept query can still
find its documents.
"""

from __future__ import annotations

from typing import Any

from shiftbench.core.data.sources import RANKING_TABLES, RANKING_TYPES
from shiftbench.core.messages import option
from shiftbench.core.records import DataRow
from shiftbench.errors import InputError

QUERIES, CORPUS, TRAIN, REFERENCES = "queries", "corpus", "train", "references"
PARTS = (QUERIES, CORPUS, TRAIN, REFERENCES)
# the text fields a part adds to the rows a variant rewrites
PART_FIELDS = {("Summarization", REFERENCES): ("human_summaries",)}
DEFAULT = (QUERIES,)


def parts_of(task_type: str) -> tuple[str, ...]:
    """The parts a task type has."""
    if task_type in RANKING_TYPES:
        return (QUERIES, CORPUS)
    if task_type == "Classification":
        return (QUERIES, TRAIN)
    if task_type == "Summarization":
        return (QUERIES, REFERENCES)
    return (QUERIES,)


def with_parts(source: Any, rewrite: tuple[str, ...]) -> Any:
    """The source whose text fields include those the rewritten parts add (Summarization's
    human summaries under `references`)."""
    import dataclasses

    extra = tuple(f for p in rewrite for f in PART_FIELDS.get((source.task_type, p), ()))
    return dataclasses.replace(source, extra_text_fields=extra) if extra else source


def default_rewrite(task_type: str) -> tuple[str, ...]:
    """What gen rewrites when --rewrite is not given: the scored texts alone."""
    return DEFAULT


def parse_rewrite(text: str | None, task_type: str) -> tuple[str, ...]:
    """--rewrite's comma-separated parts, checked against the task type (None: the default)."""
    if text is None:
        return default_rewrite(task_type)
    return check_rewrite(task_type, tuple(p.strip() for p in text.split(",") if p.strip()))


def check_rewrite(task_type: str, asked: tuple[str, ...]) -> tuple[str, ...]:
    """The parts asked for, in canonical order, or InputError saying why not."""
    unknown = [p for p in asked if p not in PARTS]
    if unknown:
        raise InputError(
            f"unknown {option('rewrite')} part {unknown[0]!r}; choose from {', '.join(PARTS)}"
        )
    has = parts_of(task_type)
    lacking = [p for p in asked if p not in has]
    if lacking:
        raise InputError(
            f"{option('rewrite')} {lacking[0]}: {task_type} tasks have no {lacking[0]} to rewrite; "
            f"their parts: {', '.join(has)}"
        )
    if QUERIES not in asked:
        raise InputError(
            f"{option('rewrite')} {','.join(asked)} leaves out queries, the scored texts; "
            f"name them too (queries,{','.join(asked)})"
        )
    return tuple(p for p in PARTS if p in asked)


def folder_split(context: str) -> str:
    """A context name (`corpus/test`) as a run folder's split name (`corpus.test`)."""
    return context.replace("/", ".", 1)


def context_name(split: str) -> str:
    """A run folder's split name as evaluate's context name: `corpus.test` is
    `corpus/test`; any other name is itself."""
    kind, dot, rest = split.partition(".")
    return f"{kind}/{rest}" if dot and kind in RANKING_TABLES else split


def rewritten_splits(source: Any, rewrite: tuple[str, ...]) -> tuple[str, ...]:
    """The run folder splits whose texts a variant rewrites."""
    names = list(source.splits)
    if CORPUS in rewrite:
        names += [folder_split(f"corpus/{s}") for s in source.splits]
    if TRAIN in rewrite:
        names += [s for s in source.context_splits if s not in names]
    return tuple(names)


def ranking_rows(
    source: Any,
    queries: dict[str, list[DataRow]],
    tables: dict[str, Any],
    limit: int | None,
) -> dict[str, list[DataRow]]:
    """The corpus (with row ids), judgements and candidates of each scored split, as run
    folder splits; with `limit`, cut down to what the kept queries need plus the first
    `limit` documents."""
    out: dict[str, list[DataRow]] = {}
    for split in source.splits:
        kept = {str(r["id"]) for r in queries[split]}

        def wanted(row: DataRow, kept: set[str] = kept) -> bool:
            return limit is None or str(row["query-id"]) in kept

        qrels = [r for r in tables[f"qrels/{split}"].to_list() if wanted(r)]
        ranked = []
        if f"top_ranked/{split}" in tables:
            ranked = [r for r in tables[f"top_ranked/{split}"].to_list() if wanted(r)]
        needed = {str(r["corpus-id"]) for r in qrels}
        needed |= {str(d) for r in ranked for d in r["corpus-ids"]}
        out[folder_split(f"corpus/{split}")] = [
            {"row_id": i, **r}
            for i, r in enumerate(tables[f"corpus/{split}"].to_list())
            if limit is None or i < limit or str(r["id"]) in needed
        ]
        out[folder_split(f"qrels/{split}")] = qrels
        if f"top_ranked/{split}" in tables:
            out[folder_split(f"top_ranked/{split}")] = ranked
    return out
