"""Fixed inputs for the report page and the documentation's pictures: evaluate results
folders written from fixed figures (no model, no clock, no version in them), so what is
rendered from them is the same on every run and every machine."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from support.report import record

# per dataset and model: the original's score, then (config, score, delta, ci95) per variant
FIGURES = {
    "STSBenchmark": {
        "all-MiniLM-L6-v2": (0.8203, [
            ("paraphrase-s1337", 0.7641, -0.0562, [-0.0815, -0.0327]),
            ("summarisation-s1337", 0.7012, -0.1191, [-0.1530, -0.0874]),
        ]),
        "static-minilm": (0.6874, [
            ("paraphrase-s1337", 0.6025, -0.0849, [-0.1172, -0.0541]),
            ("summarisation-s1337", 0.5433, -0.1441, [-0.1857, -0.1046]),
        ]),
    },
    "BIOSSES": {
        "all-MiniLM-L6-v2": (0.8164, [
            ("paraphrase-s1337", 0.7735, -0.0429, [-0.1268, 0.0372]),
            ("summarisation-s1337", 0.6950, -0.1214, [-0.2311, -0.0188]),
        ]),
        "static-minilm": (0.6122, [
            ("paraphrase-s1337", 0.5301, -0.0821, [-0.1925, 0.0246]),
            ("summarisation-s1337", 0.4467, -0.1655, [-0.2904, -0.0513]),
        ]),
    },
}  # fmt: skip


def write_fixed_results(base: Path) -> list[Path]:
    """One results folder per dataset under `base` (STSBenchmark, BIOSSES), each scoring
    both MODELS on a paraphrase and a summarisation of 100 rows; returns the folders."""
    folders = []
    draws = np.random.default_rng(7)  # the bootstrap draws the intervals over datasets use
    for dataset, per_model in FIGURES.items():
        models = []
        for model, (original, variants) in per_model.items():
            results = [{**record("original", original), "rows": 100}]
            for config, score, delta, ci95 in variants:
                spread = (ci95[1] - ci95[0]) / 3.92
                replicates = [round(float(d), 6) for d in draws.normal(delta, spread, 200)]
                figures = record(config, score, delta, replicates=replicates)
                results.append({**figures, "rows": 100, "ci95": ci95})
            models.append({"model": {"id": model}, "results": results})
        document = {
            "target": dataset,
            "source": {"name": dataset, "task_type": "STS"},
            "task_type": "STS",
            "main_score": "cosine_spearman",
            "models": models,
        }
        folder = base / dataset
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
        folders.append(folder)
    return folders
