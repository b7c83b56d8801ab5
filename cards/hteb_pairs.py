"""One pair of HTEB's transformation files as an export writes it, and what every export
shares (cards/hteb.py, cards/hteb_lists.py, cards/hteb_retrieval.py): HTEB's default
context, the keys an import adds to HTEB's metadata, the language HTEB names a
one-language dataset's records with, the generator's Hub id, a pair's metadata (kept from
an import or made from the run), the writing and reading back of a pair, the configs left
out, the staged writing of the tree and the result of an export."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.core.data.hteb import (
    HTEB_NAMES,
    Pair,
    generator_directory,
    latest_pair,
    pair_names,
    read_pair,
)
from shiftbench.core.data.names import check_name
from shiftbench.core.data.runcard import META_FILE
from shiftbench.core.data.source_languages import field_languages
from shiftbench.core.data.writes import stage_beside
from shiftbench.core.messages import counted
from shiftbench.core.records import ConfigRecord, DataRow, RunMeta
from shiftbench.errors import InputError

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
    root: Path, doc: dict[str, Any], originals: list[DataRow], rows: list[DataRow]
) -> Path:
    """One pair as HTEB writes it: two struct columns of one type, no schema metadata."""
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


def generator_id(run: Path, name: str, info: ConfigRecord, generator: str | None) -> str:
    """The Hub id of config `name`'s generator: `generator` where given, else the one the
    run recorded; a local path is refused in one line."""
    model = generator or str((m.get("id") if (m := info.get("model")) else None) or "")
    if not model or model.startswith(("/", "./", "../", "~")):
        raise InputError(
            f"{run}: config {name} records no Hub model id for its generator; "
            "name it with --generator"
        )
    return model


def hteb_configs(run: Path, meta: RunMeta) -> dict[str, ConfigRecord]:
    """The run's transform configs HTEB has a transformation for, by name; a run with
    none is refused."""
    chosen = {
        n: c
        for n, c in meta["configs"].items()
        if c.get("kind") == "transform" and c.get("transform") in HTEB_NAMES
    }
    if not chosen:
        raise InputError(f"{run} holds no config of a transformation HTEB has")
    return chosen


@contextmanager
def staged(output: Path) -> Iterator[Path]:
    """A folder beside `output` to write the tree in, renamed to `output` once all of it
    is written, removed on any failure (so a refused export writes nothing)."""
    stage = stage_beside(output)
    try:
        yield stage
        os.replace(stage, output)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def pinned(revision: Any) -> str | None:
    """A dataset revision as HTEB's metadata keeps it: a full 40-character commit, else
    none."""
    return revision if isinstance(revision, str) and len(revision) == 40 else None


def pair_folder(doc: Mapping[str, Any]) -> str:
    """The <transformation>/<seed> folder a pair's metadata `doc` names."""
    return f"{doc['transformation']}/{doc['seed_transform']}"


@dataclass(frozen=True)
class ConfigPair:
    """One transform config of the run as an export writes it: its name and record
    (`info`), the generator's Hub id (`model`), and its original and rewritten records in
    HTEB's layout."""

    name: str
    info: ConfigRecord
    model: str
    originals: list[DataRow]
    transformed: list[DataRow]


def kept_metadata(config: ConfigPair, also: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """An imported config's own metadata for its generator, without what import added
    (IMPORTED_KEYS and `also`); None for a config made by shiftbench."""
    info = config.info
    held = info.get("hteb")
    if held and held.get("transformation") == HTEB_NAMES[str(info["transform"])]:
        kept = {k: v for k, v in held.items() if k not in (*IMPORTED_KEYS, *also)}
        kept["generator_model"] = config.model
        return kept
    return None


def made_metadata(
    config: ConfigPair,
    dataset: str,
    statistics: dict[str, Any],
    revision: str | None,
    filtering: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A pair's metadata made from the run, in the order HTEB's writer puts its keys: no
    generation time, the limits the run recorded, `statistics`, then the data filter
    report and the dataset's `revision` where given."""
    info = config.info
    transformation = HTEB_NAMES[str(info["transform"])]
    backend: Mapping[str, Any] = info.get("backend") or {}
    generator: Mapping[str, Any] = info.get("model") or {}
    # the context the run recorded: vllm's max_model_len, Ollama's num_ctx (on its model)
    context = backend.get("max_model_len") or generator.get("num_ctx")
    doc: dict[str, Any] = {
        "generator_model": config.model,
        "transformation": transformation,
        "dataset": dataset,
        "seed_transform": int(info.get("seed", 0)),
        "generation_datetime": None,
        "max_model_length": int(context or DEFAULT_CONTEXT),
        "max_tokens": int(info.get("max_new_tokens") or 512),
        "max_retries": max(int(info.get("max_attempts") or 1) - 1, 0),
        "generation_statistics": statistics,
    }
    if filtering is not None:
        doc["data_filtering"] = filtering
    if revision is not None:
        doc["source_revision"] = revision
    if transformation == "translation":
        doc["translation_language_selection"] = "dataset"
    return doc


def write_checked(stage: Path, doc: dict[str, Any], config: ConfigPair, run: Path) -> Pair:
    """Write the config's pair (metadata `doc`) under `stage` and read it back with HTEB's
    rules; the pair read. A dataset, transformation or seed that cannot name a folder is
    refused."""
    for key in ("dataset", "transformation", "seed_transform"):  # folders of the tree
        check_name(str(doc[key]), run / META_FILE, f"configs.{config.name}.hteb.{key}")
    originals, transformed = config.originals, config.transformed
    folder = write_pair(stage, doc, originals, transformed)
    pair = latest_pair(folder)  # HTEB's rules, on what was written
    if read_pair(pair) != (originals, transformed):
        raise AssertionError(f"{folder}: the records did not read back as written")
    return pair


def left_out(meta: RunMeta, chosen: Iterable[str]) -> tuple[str, ...]:
    """The run's configs an export leaves out: every one but the original and `chosen`."""
    written = set(chosen)
    return tuple(
        n for n, c in meta["configs"].items() if c.get("kind") != "original" and n not in written
    )
