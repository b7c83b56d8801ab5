"""One pair of HTEB's transformation files as an export writes it, and what every export
shares (cards/hteb.py, cards/hteb_retrieval.py): HTEB's default context, the keys an
import adds to HTEB's metadata, the language HTEB names a one-language dataset's records
with, and the result of an export."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.core.data.hteb import generator_directory, pair_names
from shiftbench.core.data.source_languages import field_languages
from shiftbench.core.messages import counted

DEFAULT_CONTEXT = 8192  # HTEB's max_model_length when its config names none
# what import adds to HTEB's metadata
IMPORTED_KEYS = ("file", "file_sha256", "fallback_texts", "record_keys")


@dataclass(frozen=True)
class Exported:
    """What an export wrote."""

    output: Path
    folders: tuple[str, ...]  # <transformation>/<seed> per pair
    skipped: tuple[str, ...]  # configs HTEB has no transformation for
    # translation configs whose texts went into other languages than HTEB's rules give
    relabelled: tuple[str, ...] = ()

    def summary(self) -> str:
        pairs = counted(len(self.folders), "HTEB pair")
        line = f"wrote {pairs} ({', '.join(self.folders)}) to {self.output}"
        if self.skipped:
            line += f"; not HTEB transformations, left out: {', '.join(self.skipped)}"
        if self.relabelled:
            line += (
                "; HTEB's results will name other target languages than the texts of "
                f"{', '.join(self.relabelled)} are in (its files do not store them: HTEB "
                "works them out from its own rules)"
            )
        return line


def hteb_language(source: Any) -> str | None:
    """HTEB's `language` of a one-language dataset's records: its ISO 639-3 code."""
    codes = (source.get("languages") or {}).get("default") or []
    found = field_languages(codes, ("text",))[0] if len(codes) == 1 else None
    return found.iso3 if found else None


def write_pair(
    root: Path, doc: dict[str, Any], originals: list[dict[str, Any]], rows: list[dict[str, Any]]
) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    model, transformation = doc["generator_model"], doc["transformation"]
    dataset, seed = doc["dataset"], doc["seed_transform"]
    folder = root / generator_directory(model) / dataset / transformation / str(seed)
    folder.mkdir(parents=True)
    data, metadata = pair_names(model, transformation, dataset, seed, doc["generation_datetime"])
    kind = pa.array(originals).type
    table = pa.table(
        {
            "original": pa.array(originals, type=kind),
            f"{transformation}_seed_{seed}": pa.array(rows, type=kind),
        }
    )
    pq.write_table(table.replace_schema_metadata(None), folder / data, compression="zstd")
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    (folder / metadata).write_text(text, encoding="utf-8")
    return folder
