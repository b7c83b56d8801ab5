"""Main scores per config, as evaluate writes them and as mteb computes them."""

from __future__ import annotations

import json

import pytest

from support.environment import ENCODER


def ours(invoke, run, tmp_path, store, *extra) -> dict[str, float]:
    """evaluate's main scores per config, checked against mteb's own reading of the
    results folder's mteb-layout files; `store`: the embedding store shared by the
    session's parity tests."""
    import mteb

    cache = tmp_path / "cache"
    out = cache / "results"  # mteb's ResultCache reads CACHE/results/<model>/<revision>/
    args = ("-m", ENCODER, "-o", out, "--no-plots", "--resamples", "0", "--cache-dir", store,
            *extra)  # fmt: skip
    result = invoke("evaluate", run, *args)
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # a config whose queries and corpus were both rewritten has one record per side too
    # (the 2x2 of evaluate's report); its headline record, first, is the one mteb's is
    scores: dict[str, float] = {}
    for record in doc["models"][0]["results"]:
        scores.setdefault(record["config"], record["main_score"])
    read = mteb.ResultCache(cache_path=cache).load_results(
        require_model_meta=True, include_remote=False
    )
    ((model,),) = [read.model_results]
    assert model.model_name == ENCODER
    source = doc["source"]["name"]
    by_task = {t.task_name: t.get_score() for t in model.task_results}
    assert by_task == pytest.approx({f"{source}.{c}": v for c, v in scores.items()})
    return scores


def theirs(model, tasks, source: str | None = None) -> dict[str, float]:
    """mteb's main score per config, with `model` (fixtures/parity.py: mteb_model); `source`: the
    task names' prefix (default: up to the first dot)."""
    import mteb

    results = mteb.evaluate(model, tasks, cache=None, overwrite_strategy="always")
    scores = {}
    for task in results.task_results:
        ((_split, entries),) = task.scores.items()
        (entry,) = entries
        name = task.task_name
        config = name.removeprefix(f"{source}.") if source else name.split(".", 1)[1]
        scores[config] = entry["main_score"]
    return scores
