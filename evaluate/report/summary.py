"""The report's summary document (`summary.json`): every figure and statistic for a set of
evaluate results (`summarise_results`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from shiftbench.core.records import ReportSummary, ResultsDocument
from shiftbench.core.report_rows import UnitRecord, UnitTransform
from shiftbench.evaluate.report.statistics import (
    baseline_tests,
    kendall_per_dataset,
    median_absolute_differences,
    model_summary,
    prompt_sensitivity,
    ranking_agreement,
    split_half_reliability,
    transform_tests,
)
from shiftbench.evaluate.report.units import (
    SEED,
    SPLIT_HALF_DRAWS,
    ScoredUnit,
    _interval,
    aggregation,
    dataset_labels,
    dataset_units,
    interval_method,
    scored_units,
    shared_sources,
    transform_name,
)
from shiftbench.evaluate.sides import shift_summary


@dataclass
class ReportSettings:
    """What a report computes beyond the defaults."""

    baseline: str | None = None
    split_half_draws: int = SPLIT_HALF_DRAWS
    seed: int = SEED


def summarise_results(
    documents: Sequence[ResultsDocument], settings: ReportSettings | None = None
) -> ReportSummary:
    """Everything the report shows, as data (it is also written as summary.json)."""
    settings = settings or ReportSettings()
    subset_units = scored_units(documents)
    datasets = dataset_units(subset_units)
    method = interval_method(documents)
    order = aggregation(documents)
    summary = model_summary(datasets, method, order)
    models = list(summary)
    if settings.baseline is not None and settings.baseline not in models:
        from shiftbench.errors import InputError

        raise InputError(
            f"--baseline {settings.baseline} is not among the models: {', '.join(models)}"
        )
    sides = shift_summary(documents, dataset_labels(documents), transform_name)
    document = {
        "datasets": dataset_labels(documents),
        **({"shared_sources": shared} if (shared := shared_sources(documents)) else {}),
        **({"sides": sides} if sides else {}),
        "interval": method,
        "aggregation": order,
        "units": [_unit_record(u, method) for u in subset_units],
        "models": summary,
        "tests": transform_tests(datasets),
        "baseline_tests": baseline_tests(datasets, settings.baseline, settings.seed)
        if settings.baseline
        else [],
        "median_abs_delta": median_absolute_differences(datasets),
        "kendall_per_dataset": kendall_per_dataset(datasets),
        "kendall": ranking_agreement(summary),
        "split_half": split_half_reliability(datasets, settings.split_half_draws, settings.seed),
        "split_half_delta": split_half_reliability(
            datasets, settings.split_half_draws, settings.seed, on="delta"
        ),
        "prompt_sensitivity": prompt_sensitivity(datasets),
    }
    return cast(ReportSummary, document)  # built as one literal to keep summary.json's order


def _unit_record(u: ScoredUnit, method: str) -> UnitRecord:
    return {
        "model": u.model,
        "dataset": u.dataset,
        "subset": u.subset,
        "task_type": u.task_type,
        "original": u.original,
        "transforms": {t: _unit_transform(u, t, method) for t in u.transforms},
    }


def _unit_transform(u: ScoredUnit, t: str, method: str) -> UnitTransform:
    p = u.transforms[t]
    record: UnitTransform = {
        "axis": u.axis_of[t],
        "prompt_variant": u.prompt_of.get(t, 1),
        "seeds": u.seeds[t],
        "score": p.score,
        "delta": p.delta,
        "ci95": _interval(u.replicates.get(t), method, u.items.get(t)),
    }
    if t in u.probe:
        record["self_retrieval"] = u.probe[t]
    if t in u.evalrank:
        record["evalrank"] = u.evalrank[t]
    if t in u.faithful:
        record["faithful"] = u.faithful[t]
    return record
