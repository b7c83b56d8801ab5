"""Text fields that hold a list of texts per row, such as Summarization's machine_summaries.

gen rewrites every text of a list on its own, exactly as it rewrites a one-text field
(identical texts share one call, wherever they occur), and puts the outcomes back as a
list in the same order: the rewritten texts, their statuses in `status_<field>`, and their
languages in `language_<field>`. A row's status names its first failed text. A one-text
field has its `status_<field>` too, one status; `text_statuses` reads either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from shiftbench.core.data.sources import TASK_SCHEMAS
from shiftbench.errors import InputError

T = TypeVar("T")


def field_texts(value: Any) -> list[str]:
    """The texts a field holds: the list itself, or its one text."""
    return list(value) if isinstance(value, list) else [value]


def regrouped(value: Any, outcomes: list[T]) -> T | list[T]:
    """The outcomes of `field_texts(value)` shaped as the field was: a list for a list."""
    return outcomes if isinstance(value, list) else outcomes[0]


def text_statuses(row: Mapping[str, Any], field: str) -> list[Any]:
    """The status of each text of `row[field]`, in `field_texts` order: the row's
    `status_<field>`, or the row's `status` for every text where the row has none (a run
    folder written before gen kept a status per text) or one that does not fit the
    field (a list of another length, a list for one text, one text for a list)."""
    texts = field_texts(row.get(field))
    own = row.get(f"status_{field}")
    fits = (
        isinstance(own, list) and len(own) == len(texts)
        if isinstance(row.get(field), list)
        else own is not None and not isinstance(own, list | dict)
    )
    return field_texts(own) if fits else [row.get("status")] * len(texts)


def misfit(value: Any, listed: bool) -> str | None:
    """What a field holds instead of text (a list of texts where `listed`), or None."""
    if not listed:
        return None if isinstance(value, str) else type(value).__name__
    if not isinstance(value, list):
        return type(value).__name__
    wrong = next((t for t in value if not isinstance(t, str)), None)
    return None if wrong is None else f"a list with {type(wrong).__name__}"


def refuse_listed(source: Mapping[str, Any], stage: str) -> None:
    """Refuse a run whose rewritten field is a list of texts, for a stage that reads one
    text per field."""

    schema = TASK_SCHEMAS.get(source.get("task_type", ""))
    if schema is not None and schema.list_fields:
        raise InputError(
            f"{stage} does not handle {source['task_type']} runs yet: each row's "
            f"{schema.list_fields[0]} is a list of texts"
        )
