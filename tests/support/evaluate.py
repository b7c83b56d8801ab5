"""Shared by the evaluate tests: readers of mteb's files and shiftbench's tables, and small
run folders built by hand."""

from __future__ import annotations

import json
from pathlib import Path

from support.files import read_rows


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _card(folder, configs):
    lines = ["---", "configs:"]
    for name, file in configs.items():
        lines += [f"- config_name: {name}", "  data_files:", "  - split: test", f"    path: {file}"]
    (folder / "README.md").write_text("\n".join([*lines, "---", ""]), encoding="utf-8")


def _ranking_tables(folder, queries=None):
    corpus = read_rows(folder / "corpus.jsonl")
    qrows = read_rows(folder / "queries.jsonl")[:queries]
    keep = {q["id"] for q in qrows}
    qrels = [r for r in read_rows(folder / "qrels.jsonl") if r["query-id"] in keep]
    relevant = {}
    for r in qrels:
        relevant.setdefault(r["query-id"], {})[r["corpus-id"]] = r["score"]
    return corpus, qrows, qrels, relevant


def _candidates(corpus, queries, relevant):
    """Each query's ten candidates: its relevant paragraph, the four before it and the five
    after it in corpus order (paragraphs of the same article, mostly)."""
    ids = [d["id"] for d in corpus]
    ranked = []
    for q in queries:
        (gold,) = relevant[q["id"]]
        at = ids.index(gold)
        ranked.append(
            {"query-id": q["id"], "corpus-ids": [ids[(at + s) % len(ids)] for s in range(-4, 6)]}
        )
    return ranked


def _sts_run_folder(folder, variants):
    """A run folder of the packaged sample: the original and one config per entry of
    `variants` (name -> a function of (row position, row) giving the row's new fields)."""
    rows = read_rows(Path(__file__).parents[2] / "sample" / "data" / "test.jsonl")
    rows = [{"row_id": i, **r} for i, r in enumerate(rows)]
    configs = {"original": {"kind": "original", "subset": "default", "rows": {"test": 42}}}
    tables = {"original": rows}
    for seed, (name, change) in enumerate(variants.items(), start=1):
        configs[name] = {"kind": "transform", "subset": "default", "transform": name,
                         "axis": "Lexical", "seed": seed, "rows": {"test": 42}}  # fmt: skip
        tables[name] = [{**r, "status": "ok", **change(i, r)} for i, r in enumerate(rows)]
    for name, table in tables.items():
        _jsonl(folder / name / "test.jsonl", table)
    source = {"name": "sample", "task_type": "STS", "main_score": "cosine_spearman",
              "text_fields": ["sentence1", "sentence2"], "score_range": [0.0, 5.0],
              "splits": ["test"]}  # fmt: skip
    meta = {"format": 1, "source": source, "configs": configs}
    (folder / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")
    return rows, tables


def _rotated(text, k):
    words = text.split()
    return " ".join(words[k:] + words[:k])
