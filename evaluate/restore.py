"""HTEB's treatment of failed rewrites: the original text scored in a failed text's place.

Under shiftbench's own scoring, a variant's row whose rewrite failed is left out of the
variant and of its paired original (see sides.py and the evaluate guide). HTEB's released
code (`hteb/dataset_preparation.py`) keeps every row instead: a rewritten text that came
back unusable is replaced by its original at evaluation time, one text at a time, and
every other output is scored as it is, an output equal to its input included. The `hteb`
scoring protocol follows that release, on a copy of the rows; the run folder keeps what
gen wrote.

What HTEB's generator counts as unusable, and so restores:
- an output that is empty or blank, a placeholder ("[text]", "<text>", "placeholder",
  "n/a", "none", in any case) or punctuation alone;
- an output still cut at its token budget (shiftbench's `truncated`). A row records its cut
  for the row, not per text, so a truncated row of two one-text fields (STS, pair
  classification) has both restored; a list field's texts each carry their own status.

Every other check shiftbench's gen applies (wrong language, prefix or reasoning leak,
runaway length, an unchanged output) is not one HTEB's generator makes, so those outputs
are scored as written. Each record counts the rows and texts restored.
"""

from __future__ import annotations

import string
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from shiftbench.core.data.listfields import field_texts, regrouped
from shiftbench.core.data.runfolder import OK, TRUNCATED

if TYPE_CHECKING:
    from shiftbench.evaluate.run import Collection, ConfigView

ORIGINAL_PREFIX = "original_"
PLACEHOLDERS = frozenset({"[text]", "<text>", "placeholder", "n/a", "none"})
# ASCII punctuation, and the ellipsis, dashes, guillemets and curly quotes
_PUNCTUATION = frozenset(
    string.punctuation + "\u2026\u2013\u2014\u00ab\u00bb\u201c\u201d\u2018\u2019"
)


def unusable(text: Any) -> bool:
    """Whether HTEB's generator would have refused this output: not a string, blank, a
    placeholder, or punctuation and spaces only."""
    if not isinstance(text, str) or not text.strip():
        return True
    bare = text.strip()
    if bare.lower() in PLACEHOLDERS:
        return True
    return all(c in _PUNCTUATION or c.isspace() for c in bare)


def rewritten_fields(row: dict[str, Any]) -> list[str]:
    """The fields gen rewrote in this row: those it kept an `original_<field>` of."""
    return [k[len(ORIGINAL_PREFIX) :] for k in row if k.startswith(ORIGINAL_PREFIX)
            and k[len(ORIGINAL_PREFIX) :] in row]  # fmt: skip


def restored_row(row: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The row as HTEB scores it (status `ok`, unusable texts replaced by their originals)
    and how many texts were replaced."""
    new = dict(row)
    cut = row.get("status") == TRUNCATED
    replaced = 0
    for field in rewritten_fields(row):
        value, original = row[field], row[ORIGINAL_PREFIX + field]
        texts, originals = field_texts(value), field_texts(original)
        statuses = row.get(f"status_{field}")
        per_text = field_texts(statuses) if isinstance(value, list) and statuses else None
        out = []
        for i, (text, before) in enumerate(zip(texts, originals, strict=True)):
            failed = per_text[i] == TRUNCATED if per_text is not None else cut
            if failed or unusable(text):
                out.append(before)
                replaced += 1
            else:
                out.append(text)
        new[field] = regrouped(value, out)
    new["status"] = OK
    return new, replaced


def restored_config(config: ConfigView) -> ConfigView:
    """A variant's rows with HTEB's restoration, and per split the rows and texts
    restored (in `meta["restored"]`)."""
    splits, counts = {}, {}
    for split, rows in config.splits.items():
        made = [restored_row(r) for r in rows]
        splits[split] = [r for r, _ in made]
        counts[split] = {
            "rows": sum(n > 0 for _, n in made),
            "texts": sum(n for _, n in made),
            "kept_as_written": sum(
                n == 0 and r.get("status") != OK for r, (_, n) in zip(rows, made, strict=True)
            ),
        }
    return replace(config, splits=splits, meta={**config.meta, "restored": counts})


def with_originals_restored(collection: Collection) -> Collection:
    """The collection with every transformation config restored as HTEB's release does;
    the original and the controls (which the probes score) as they are."""
    configs = [
        restored_config(c) if c.meta.get("kind") == "transform" else c for c in collection.configs
    ]
    return replace(collection, configs=configs)
