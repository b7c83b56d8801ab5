"""Transformation folders in HTEB's published layout, written by the tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shiftbench.core.data.hteb import generator_directory, pair_names
from support.files import read_rows

MODEL = "cyankiwi/gemma-4-31B-it-AWQ-4bit"  # the generator of HTEB's Banking77 release


def statistics(rows: int, texts: int, fallback: int = 0, unchanged: int = 0) -> dict[str, Any]:
    """generation_statistics for `rows` records of `texts` rewritten texts."""
    return {
        "records_total": rows,
        "records_targeted": rows,
        "text_fields_total": texts,
        "records_with_fallback": min(fallback, rows),
        "text_fields_with_fallback": fallback,
        "unchanged_outputs": unchanged,
        "retried_text_fields": fallback,
        "recovered_after_retry_text_fields": 0,
        "fallback_reasons": {"output_length_after_retries": fallback} if fallback else {},
    }


def write_pair(
    root: Path,
    dataset: str,
    transformation: str,
    seed: int,
    originals: list[dict[str, Any]],
    transformed: list[dict[str, Any]],
    *,
    generated: str | None = "2026-09-15T11:18:02Z",
    model: str = MODEL,
    stats: dict[str, Any] | None = None,
    **extra: Any,
) -> tuple[Path, Path]:
    """One pair as HTEB writes it: two struct columns of one type, no schema metadata,
    and its metadata JSON (the keys in HTEB's order). Returns (data, metadata)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = root / generator_directory(model) / dataset / transformation / str(seed)
    folder.mkdir(parents=True, exist_ok=True)
    data_name, meta_name = pair_names(model, transformation, dataset, seed, generated)
    kind = pa.array(originals).type
    table = pa.table(
        {
            "original": pa.array(originals, type=kind),
            f"{transformation}_seed_{seed}": pa.array(transformed, type=kind),
        }
    )
    pq.write_table(table.replace_schema_metadata(None), folder / data_name, compression="zstd")
    texts = sum(1 for _ in originals)
    doc = {
        "generator_model": model,
        "transformation": transformation,
        "dataset": dataset,
        "seed_transform": seed,
        "generation_datetime": generated,
        "max_model_length": 4096,
        "max_tokens": 1024 if "expansion" in transformation else 512,
        "max_retries": 3,
        "generation_statistics": stats or statistics(len(originals), texts),
        **extra,
    }
    (folder / meta_name).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return folder / data_name, folder / meta_name


def sts_rows(shared_data: Path, n: int = 12) -> list[dict]:
    rows = read_rows(shared_data / "STSBenchmark" / "data" / "test.jsonl")[:n]
    return [{**r, "_hteb_split": "test", "language": "eng"} for r in rows]


def rewritten(originals: list[dict], fallback: set[int], unchanged: set[int]) -> list[dict]:
    """HTEB's transformed column: sentence2 empty where the generator fell back, both
    texts kept where its output was its input, otherwise both texts changed."""
    out = []
    for i, row in enumerate(originals):
        new = dict(row)
        if i not in unchanged:
            new["sentence1"] = f"In other words: {row['sentence1']}"
            new["sentence2"] = f"Put differently, {row['sentence2']}"
        if i in fallback:
            new["sentence2"] = ""
        out.append(new)
    return out
