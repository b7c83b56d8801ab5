"""Synthetic results documents for the report's statistics."""

from __future__ import annotations

import re

AXIS = {
    "paraphrase": "Lexical/Stylistic",
    "backtranslation": "Lexical/Stylistic",
    "summarisation": "Length",
    "expansion": "Length",
    "translation": "Language",
}
CONFIG = re.compile(r"^(?P<t>[a-z-]+?)(?:-p(?P<p>\d+))?-s(?P<s>\d+)$")


def record(config, score, delta=None, subset="default", replicates=None):
    """A results record as evaluate writes it, for `original` or `<transform>[-pN]-s<seed>`."""
    if config == "original":
        return {
            "config": config, "kind": "original", "subset": subset, "split": "test",
            "transform": None, "axis": None, "seed": None, "prompt_variant": None, "rows": 10,
            "main_score": score, "original_same_rows": None, "delta": None,
        }  # fmt: skip
    m = CONFIG.match(config)
    assert m, config
    return {
        "config": config, "kind": "transform", "subset": subset, "split": "test",
        "transform": m["t"], "axis": AXIS[m["t"]], "seed": int(m["s"]),
        "prompt_variant": int(m["p"] or 1), "rows": 10, "main_score": score,
        "original_same_rows": score - delta, "delta": delta,
        **({"delta_replicates": list(replicates)} if replicates is not None else {}),
    }  # fmt: skip


def document(dataset, per_model, task_type="STS"):
    return {
        "target": dataset,
        "source": {"name": dataset},
        "task_type": task_type,
        "main_score": "cosine_spearman",
        "models": [{"model": {"id": m}, "results": rs} for m, rs in per_model.items()],
    }


# --- split-half reliability ---------------------------------------------------------------


def axis_documents(rng, models, datasets, signal):
    """Every (model, dataset) has one transformation per axis; the axes differ by a large
    constant, and a model's own effect is `signal` times a fixed per-model value."""
    effect = rng.normal(0, 1, models)
    docs = []
    for d in range(datasets):
        per_model = {}
        for m in range(models):
            rs = [record("original", 0.7)]
            for t, offset in (
                ("paraphrase", -0.02),
                ("summarisation", -0.1),
                ("translation", -0.4),
            ):
                delta = offset + signal * 0.05 * effect[m] + float(rng.normal(0, 0.05))
                rs.append(record(f"{t}-s1", 0.7 + delta, delta))
            per_model[f"m{m}"] = rs
        docs.append(document(f"d{d}", per_model, task_type=("STS", "Clustering")[d % 2]))
    return docs
