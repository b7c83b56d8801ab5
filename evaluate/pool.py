"""HTEB's treatment of a multilingual dataset: its subsets pooled into one score.

shiftbench, like mteb, scores each subset of a dataset on its own and averages the
subsets' figures. HTEB's release (`hteb/load_datasets.py`) reads every subset of a
dataset into one list of records and scores the list once: one Spearman over every STS
pair of every language, one classifier fitted on every language's train rows, one mean
over every query. Clustering is the exception: a dataset laid out per language is
clustered per language and the V-measures averaged, which is what shiftbench already
does, so its subsets are not pooled.

Under `--protocol hteb` evaluate pools on a copy: the configs of one name across subsets
(`original.de`, `original.en`, ... -> `original`) become one config of subset `pooled`,
rows in the source's subset order. Row ids, and the ids a ranking task's queries, corpus,
judgements and candidates share, are prefixed with their subset (`de/...`), so two
subsets' rows never meet by id. The run folder keeps its subsets.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from shiftbench.core.records import DataRow, SourceRecord

if TYPE_CHECKING:
    from shiftbench.evaluate.collect import Collection, ConfigView
    from shiftbench.evaluate.faithful import CertifiedRows

POOLED = "pooled"
# task types whose subsets are scored apart and averaged under HTEB too
NOT_POOLED = ("Clustering",)
# the id fields of a ranking task's splits, and the list field of its candidates
ID_FIELDS = ("id", "query-id", "corpus-id")
LIST_ID_FIELDS = ("corpus-ids",)


def poolable(collection: Collection) -> bool:
    """Whether the collection has several subsets to pool."""
    subsets = {c.meta["subset"] for c in collection.configs}
    return collection.source["task_type"] not in NOT_POOLED and len(subsets) > 1


def stem(config: ConfigView) -> str:
    """A config's name without its subset (`paraphrase-s1337.de` -> `paraphrase-s1337`)."""
    return config.name.removesuffix(f".{config.meta['subset']}")


def pooled_id(subset: str, value: Any) -> str:
    return f"{subset}/{value}"


def _prefixed(row: DataRow, subset: str) -> DataRow:
    out = dict(row)
    if "row_id" in out:
        out["row_id"] = pooled_id(subset, out["row_id"])
    for key in ID_FIELDS:
        if key in out:
            out[key] = pooled_id(subset, out[key])
    for key in LIST_ID_FIELDS:
        if key in out:
            out[key] = [pooled_id(subset, v) for v in out[key]]
    return out


def _restored(configs: list[ConfigView]) -> dict[str, dict[str, int]] | None:
    """The counts of originals put back (evaluate/restore.py), added over the subsets."""
    if not any("restored" in c.meta for c in configs):
        return None
    total: dict[str, dict[str, int]] = {}
    for c in configs:
        for split, counts in (c.meta.get("restored") or {}).items():
            into = total.setdefault(split, {})
            for key, n in (counts or {}).items():
                into[key] = into.get(key, 0) + n
    return total


def pooled(collection: Collection) -> Collection:
    """The collection with each config's subsets pooled into one config."""
    order = list(collection.source.get("subsets") or [])
    rank = {s: i for i, s in enumerate(order)}
    groups: dict[str, list[ConfigView]] = {}
    for config in collection.configs:
        groups.setdefault(stem(config), []).append(config)
    configs = []
    for name, members in groups.items():
        members.sort(key=lambda c: rank.get(c.meta["subset"], len(rank)))
        splits: dict[str, list[DataRow]] = {}
        for c in members:
            for split, rows in c.splits.items():
                splits.setdefault(split, []).extend(_prefixed(r, c.meta["subset"]) for r in rows)
        meta = {
            **members[0].meta,
            "subset": POOLED,
            "pooled_subsets": [c.meta["subset"] for c in members],
        }
        restored = _restored(members)
        if restored is not None:
            meta["restored"] = restored
        configs.append(replace(members[0], name=name, meta=meta, splits=splits))
    languages = collection.source.get("languages") or {}
    union = [lang for s in order for lang in languages.get(s, [])]
    source: SourceRecord = {
        **collection.source,
        "subsets": [POOLED],
        "pooled_subsets": order,
        "languages": {POOLED: list(dict.fromkeys(union))},
    }
    return replace(collection, source=source, configs=configs)


def pooled_certified(certified: CertifiedRows, collection: Collection) -> CertifiedRows:
    """Certified rows under the pooled configs' names and row ids."""
    rows: dict[str, set[Any]] = {}
    for config in collection.configs:
        keep = certified.rows.get(config.name, set())
        into = rows.setdefault(stem(config), set())
        into.update((split, pooled_id(config.meta["subset"], rid)) for split, rid in keep)
    return replace(certified, rows=rows)
