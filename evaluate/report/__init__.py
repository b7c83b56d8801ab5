"""From scored records to robustness figures: the axis aggregation, statistics and tables.

Records come per (model, config, split). Within a dataset subset, a config's main score is
averaged over its scored splits and a transformation's over its seeds. Each prompt variant
of a transformation (`paraphrase-p2`) is a transformation row of its own; the axes and the
total use the default prompt only. A dataset's figure is the mean over its subsets, and
every figure across datasets is the mean over datasets: an axis's score is the mean over
its transformations (Lexical/Stylistic, Length, Language), the total the unweighted mean
of the axes, the original excluded, as HTEB aggregates. Results scored under `--protocol
hteb` are averaged in HTEB's release's order instead (each transformation over datasets
first, then the axes; see `aggregation`).

Every variant figure comes as a score and as a paired delta (the variant's score minus the
original's on the same rows). The statistics follow HTEB and PTEB with one dataset as the
unit of observation (seeds and subsets averaged first); each is defined where it is
computed.
"""

from shiftbench.evaluate.report.statistics import (
    _halves,
    baseline_tests,
    kendall_per_dataset,
    median_absolute_differences,
    model_summary,
    prompt_sensitivity,
    ranking_agreement,
    split_half_reliability,
    transform_tests,
)
from shiftbench.evaluate.report.summary import ReportSettings, summarise
from shiftbench.evaluate.report.tables import (
    Table,
    axis_rows,
    markdown_blocks,
    markdown_report,
    report_blocks,
    report_tables,
    text_report,
)
from shiftbench.evaluate.report.units import (
    ALL_MODELS,
    AXES,
    PER_DATASET,
    TOTAL,
    TRANSFORMATIONS_FIRST,
    Pair,
    Unit,
    aggregation,
    dataset_units,
    interval_method,
    units,
)

__all__ = [
    "ALL_MODELS",
    "AXES",
    "PER_DATASET",
    "TOTAL",
    "TRANSFORMATIONS_FIRST",
    "Pair",
    "ReportSettings",
    "Table",
    "Unit",
    "_halves",
    "aggregation",
    "axis_rows",
    "baseline_tests",
    "dataset_units",
    "interval_method",
    "kendall_per_dataset",
    "markdown_blocks",
    "markdown_report",
    "median_absolute_differences",
    "model_summary",
    "prompt_sensitivity",
    "ranking_agreement",
    "report_blocks",
    "report_tables",
    "split_half_reliability",
    "summarise",
    "text_report",
    "transform_tests",
    "units",
]
