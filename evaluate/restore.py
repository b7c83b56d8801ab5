"""HTEB's treatment of failed rewrites: the original text scored in a failed text's place.

Under shiftbench's own scoring, a variant's row whose rewrite failed is left out of the
variant and of its paired original (see sides.py and the evaluate guide). HTEB's released
code (`hteb/dataset_preparation.py`) keeps every row instead: a rewritten text that came
back unusable is replaced by its original at evaluation time, one text at a time, and
every other output is scored as it is, an output equal to its input included. The `hteb`
scoring protocol follows that release, on a copy of the rows; the run folder keeps what
gen wrote.

What HTEB's generator gives up on, and so what is restored (core/data/hteb.py `gave_up`):
- an output that is empty or blank, a placeholder ("[text]", "<text>", "placeholder",
  "n/a", "none", in any case) or punctuation alone;
- a text whose own status is `truncated` (still cut at its token budget) or `fallback`
  (imported from HTEB's files, where its generator gave up on it).

Each text's status is its row's `status_<field>` (one per text of a list field), so a
row of two one-text fields (STS, pair classification) with one text cut has that text
restored and the other scored as written. A row gen wrote before it kept a status per
text has its row `status` for every text: both texts of a cut row are restored.

Every other check shiftbench's gen applies (wrong language, prefix or reasoning leak,
runaway length, an unchanged output) is not one HTEB's generator makes, so those outputs
are scored as written. `shiftbench hteb export` writes empty exactly the texts restored
here, so HTEB's reuse mode scores an export as this protocol scores the run. Each record
counts the rows and texts restored.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from shiftbench.core.data.hteb import given_up
from shiftbench.core.data.listfields import field_texts, regrouped
from shiftbench.core.data.runfolder import OK
from shiftbench.core.records import DataRow

if TYPE_CHECKING:
    from shiftbench.evaluate.collect import Collection, ConfigView

ORIGINAL_PREFIX = "original_"


def rewritten_fields(row: DataRow) -> list[str]:
    """The fields gen rewrote in this row: those it kept an `original_<field>` of."""
    return [k[len(ORIGINAL_PREFIX) :] for k in row if k.startswith(ORIGINAL_PREFIX)
            and k[len(ORIGINAL_PREFIX) :] in row]  # fmt: skip


def restored_row(row: DataRow) -> tuple[DataRow, int]:
    """The row as HTEB scores it (status `ok`, each text HTEB gives up on replaced by its
    original) and how many texts were replaced."""
    new = dict(row)
    replaced = 0
    for field in rewritten_fields(row):
        value, original = row[field], row[ORIGINAL_PREFIX + field]
        texts, originals = field_texts(value), field_texts(original)
        failed = given_up(row, field)
        out = []
        for text, before, back in zip(texts, originals, failed, strict=True):
            out.append(before if back else text)
            replaced += back
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
