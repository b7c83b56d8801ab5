"""The rows of a report's summary.json (`records.ReportSummary`): one TypedDict per table
of the report, built in evaluate/report and read by its tables, plots and leaderboard."""

from __future__ import annotations

from typing import Literal, Required, TypedDict

# The kind of column a figure over datasets is of: one transformation, an axis (its
# default-prompt transformations), or the total over the axes.
ColumnKind = Literal["transform", "axis", "total"]


class FigureRecord(TypedDict, total=False):
    """A mean score and delta over datasets: the delta's 95% interval, when every dataset
    has bootstrap replicates, the draws it rests on, and the datasets' items."""

    score: Required[float]
    delta: Required[float]
    ci95: Required[list[float] | None]
    resamples: Required[int | None]
    usable_draws: Required[int | None]
    items: Required[int | None]
    rank: list[int]  # an axis's or the total's rank interval (low, high), with 2+ models


class FaithfulFigure(TypedDict):
    """The delta on the rows certified faithful (`evaluate --faithful`), None when a
    config had too few of them to score."""

    criterion: str
    rows: int
    delta: float | None


class TransformFigure(FigureRecord, total=False):
    """One transformation's figure in a model's summary."""

    axis: Required[str]
    prompt_variant: Required[int]
    self_retrieval: dict[str, float]  # mrr, hits_at_1, hits_at_3
    evalrank: dict[str, float]  # the same, and delta_mrr where the original has them
    faithful: FaithfulFigure


class ModelFigures(TypedDict):
    """One model over the datasets: original, each transformation, each axis and total."""

    datasets: int
    original: float | None
    transforms: dict[str, TransformFigure]
    axes: dict[str, FigureRecord]
    total: FigureRecord | None


class UnitTransform(TypedDict, total=False):
    """One transformation of a unit: its score and delta averaged over seeds."""

    axis: Required[str]
    prompt_variant: Required[int]
    seeds: Required[int]
    score: Required[float]
    delta: Required[float]
    ci95: Required[list[float] | None]
    self_retrieval: dict[str, float]
    evalrank: dict[str, float]
    faithful: FaithfulFigure


class UnitRecord(TypedDict):
    """One model on one dataset's subset."""

    model: str
    dataset: str
    subset: str
    task_type: str
    original: float | None
    transforms: dict[str, UnitTransform]


class SharedSource(TypedDict):
    """A source several results documents score, and their dataset labels."""

    source: str
    revision: str | None
    merged: list[str]


class SideFigure(TypedDict):
    score: float
    delta: float


class SideRow(TypedDict):
    """A ranking transformation's four figures: the original on the variant's rows, and
    query-side, corpus-side and both-sides (None where no dataset has the side)."""

    model: str
    transform: str
    datasets: int
    original: float | None
    both_sides: SideFigure | None
    query_side: SideFigure | None
    corpus_side: SideFigure | None


class TransformTest(TypedDict, total=False):
    """Per model and transformation over datasets: Wilcoxon, Hodges-Lehmann, Holm."""

    model: Required[str]
    transform: Required[str]
    axis: Required[str]
    n: Required[int]
    mean_delta: Required[float]
    hodges_lehmann: Required[float]
    ci_low: Required[float]
    ci_high: Required[float]
    ci_level: Required[float]
    wilcoxon_statistic: Required[float]
    p: Required[float]
    p_method: Required[str]
    p_holm: float  # added once the model's transformations are all tested


class BaselineTest(TypedDict, total=False):
    """PTEB's test of a model against the baseline model on one transformation."""

    transform: Required[str]
    way: Required[Literal["pooled", "run-averaged"]]
    baseline: Required[str]
    model: Required[str]
    n: Required[int]
    hodges_lehmann: Required[float]
    ci_low: Required[float]
    ci_high: Required[float]
    ci_level: Required[float]
    wilcoxon_statistic: Required[float]
    p: Required[float]
    p_method: Required[str]
    p_holm: float


class MedianAbsDelta(TypedDict):
    """HTEB's median absolute delta of a transformation or an axis."""

    of: str
    kind: Literal["transform", "axis"]
    n: int
    median_abs_delta: float


class KendallPerDataset(TypedDict):
    """HTEB's per-dataset Kendall tau between the original's ranking and a column's."""

    of: str
    kind: ColumnKind
    datasets: int
    undefined: int
    mean_tau: float | None
    sd_tau: float | None
    per_dataset: dict[str, float]


class KendallRow(TypedDict):
    """The pooled Kendall tau between the original's ranking and a column's."""

    of: str
    kind: ColumnKind
    models: int
    tau: float
    p: float


class SplitHalfAxis(TypedDict):
    median: float
    low: float
    high: float
    spearman_brown: float | None
    draws: int


class SplitHalf(TypedDict, total=False):
    """HTEB's split-half reliability of the per-axis profiles."""

    on: Required[Literal["score", "delta"]]
    draws: Required[int]
    datasets: Required[int]
    models: Required[int]
    axes: dict[str, SplitHalfAxis]


class PromptSensitivityRow(TypedDict):
    """One prompt variant's delta and its spread over seeds."""

    model: str
    transform: str
    variant: str
    prompt_variant: int
    delta: float
    seeds: int
    seed_sd: float | None
    seed_min: float
    seed_max: float
