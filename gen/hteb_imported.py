"""What every import of HTEB's files shares (gen/hteb.py, gen/hteb_lists.py,
gen/hteb_retrieval.py): the source record, the original config, a row's status, a
variant's config record, the hteb protocol's record, the writing of the run folder and
what an import wrote."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from shiftbench.core.data.hteb import DATASETS, TRANSFORMATIONS, Pair, target_pool
from shiftbench.core.data.runfolder import (
    IDENTICAL,
    OK,
    ConfigData,
    tally_status,
    usable,
    write_run,
)
from shiftbench.core.data.source_languages import field_languages
from shiftbench.core.data.sources import Source, source_meta
from shiftbench.core.data.writes import writing
from shiftbench.core.hub import sha256_file
from shiftbench.core.protocols import apply_protocol, get_protocol
from shiftbench.core.records import ConfigRecord, DataRow, RunExtras, SourceRecord
from shiftbench.core.text.transforms import TRANSFORMS

TRANSLATING = ("translation", "cross-translation")  # ours that send a text elsewhere


@dataclass(frozen=True)
class Imported:
    """What an import wrote."""

    output: Path
    dataset: str
    generator: str
    configs: tuple[str, ...]

    def summary(self) -> str:
        return (
            f"imported HTEB's {self.dataset} rewrites by {self.generator} as "
            f"{', '.join(self.configs)} to {self.output}"
        )


def recorded_language(recorded: SourceRecord, subset: str) -> str | None:
    """The ISO 639-1 code of a subset's language, as gen records it."""
    found = field_languages((recorded.get("languages") or {}).get(subset) or [], ("text",))[0]
    return found.code if found else None


def imported_source(source: Source, dataset: str, first: Pair) -> SourceRecord:
    """The source record of an import of HTEB's `dataset`: where HTEB read it from, at
    the revision the first pair names, every row."""
    recorded = source_meta(source)
    recorded["dataset_path"] = DATASETS[dataset].hf_dataset
    revision = first.metadata.get("source_revision")
    if revision:
        recorded["revision"] = revision
    recorded["row_limit"] = None
    return recorded


def finish_row(
    row: DataRow, statuses: list[str], ours: str, judged: list[str] | None = None
) -> dict[str, object]:
    """`row` with its status (its first unusable text's among `judged`, all `statuses`
    unless given) and no attempt count."""
    failed = [s for s in (statuses if judged is None else judged) if not usable(s, ours)]
    row["status"] = failed[0] if failed else (IDENTICAL if IDENTICAL in statuses else OK)
    row["attempt"] = None  # HTEB counts retries per file, not per text
    return row


def pair_config(
    pair: Pair,
    subset: str,
    out: dict[str, list[DataRow]],
    language: str | None,
    languages: dict[str, str | None],
    targets: Iterable[str],
    **kept: Any,
) -> ConfigData:
    """A pair's transform config holding the rows `out`: HTEB's generator, limits and
    metadata (`hteb`, with `kept` after the file), the source's `language` (each text
    field's in `languages`) and, for a translation, the languages its texts went into."""
    ours = TRANSFORMATIONS[pair.transformation]
    transform = TRANSFORMS[ours]
    translating = ours in TRANSLATING
    meta = pair.metadata
    record = cast(
        ConfigRecord,
        {
            "kind": "transform",
            "subset": subset,
            "settings_sha256": hashlib.sha256(
                json.dumps(meta, sort_keys=True).encode("utf-8")
            ).hexdigest(),
            "transform": ours,
            "transform_version": transform.version,
            "axis": transform.axis,
            "calls": transform.calls,
            "seed": pair.seed,
            "prompt_variant": None,
            "prompts": [],  # HTEB's files do not record its prompts
            "token_budgets": [f"flat: {meta['max_tokens']} tokens (HTEB)"],
            "max_new_tokens": meta["max_tokens"],
            "model": {"id": meta["generator_model"]},
            "backend": {"name": "hteb", "max_model_length": meta["max_model_length"]},
            "sampling": {},  # HTEB's files do not record its sampling
            "max_attempts": meta["max_retries"] + 1,
            "source_language": language,
            "source_languages": languages,
            "language_pool": list(target_pool([language] if language else []))
            if translating
            else [],
            "target_languages": sorted(targets) if translating else [],
            "rows": {s: len(r) for s, r in out.items()},
            "status_counts": {s: tally_status(r) for s, r in out.items()},
            "hteb": {
                **meta,
                "file": pair.data.name,
                "file_sha256": sha256_file(pair.data),
                "fallback_texts": meta["generation_statistics"]["text_fields_with_fallback"],
                **kept,
            },
        },
    )
    return ConfigData(f"{ours}-s{pair.seed}", record, out)


def hteb_protocol(pairs: Iterable[Pair], task_type: str) -> dict[str, object]:
    """The hteb protocol's record for a run of `pairs` of a `task_type` dataset."""
    pairs = list(pairs)
    applied = apply_protocol(
        get_protocol("hteb"),
        {
            "transforms": tuple(dict.fromkeys(TRANSFORMATIONS[p.transformation] for p in pairs)),
            "seeds": tuple(sorted({p.seed for p in pairs})),
        },
    )
    return applied.record(task_type)


def write_imported(
    output: Path,
    dataset: str,
    first: Pair,
    recorded: SourceRecord,
    configs: list[ConfigData],
    top: RunExtras,
) -> Imported:
    """Write the run folder of an import at `output`; what was written."""
    with writing(output):
        write_run(output, recorded, configs, None, top)
    model = str(first.metadata["generator_model"])
    return Imported(output, dataset, model, tuple(c.name for c in configs))
