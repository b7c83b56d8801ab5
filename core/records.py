"""The documents that cross from one stage to the next, typed once.

A run folder's `shiftbench.json` (RunMeta: its source and its configs) is written by gen and
read by every later stage; its `validation.json` (ValidationReport) is written by validate
and read by cards, evaluate's --faithful and compare; an evaluate results folder's
`results.json` (ResultsDocument) is read by report and cards. mypy checks each reader
against these types, and each reader checks a file's shape when it reads it
(`runfolder.check_meta` for shiftbench.json), so a stage meets either a document of this
shape or a one-line error naming the file. A key that only some documents hold is
optional (`total=False`); one every document holds is `Required`.
"""

from __future__ import annotations

from typing import Any, Literal, Required, TypedDict, TypeVar

from shiftbench.core.report_rows import (
    BaselineTest,
    KendallPerDataset,
    KendallRow,
    MedianAbsDelta,
    ModelFigures,
    PromptSensitivityRow,
    SharedSource,
    SideRow,
    SplitHalf,
    TransformTest,
    UnitRecord,
)

T = TypeVar("T")

# A dataset's row as the dataset holds it: column name to value. Rows are the one open
# mapping a signature may carry (their columns are the dataset's own).
DataRow = dict[str, Any]

# What a config of a run folder is: the source's rows as they are, an LLM rewrite of them,
# or a rule-based control whose effect on meaning is known.
ConfigKind = Literal["original", "transform", "control"]

# A transformed row's (or field's) status. `ok`; `identical` (an output equal to its input:
# a result for back-translation, a failure elsewhere); `truncated` (still cut at the token
# cap); `empty-input`, `not-applicable` (nothing to rewrite, or nothing a control can do);
# `fallback` (an imported HTEB text its generator gave up on, gen/hteb.py); otherwise the
# name of the automatic check the output failed (checks.CHECKS).
RowStatus = Literal[
    "ok", "identical", "truncated", "empty-input", "not-applicable", "fallback",
    "empty", "ellipsis", "json-fragment", "reasoning-leak", "prefix-leak", "wrong-language",
    "runaway", "summary-too-long",
]  # fmt: skip

# The robustness axis a transform probes; controls have none.
Axis = Literal["Lexical/Stylistic", "Length", "Language"]


class SourceRecord(TypedDict, total=False):
    """What shiftbench.json records of the source (sources.source_meta)."""

    name: Required[str]
    task_type: Required[str]
    main_score: Required[str]
    dataset_path: str
    revision: str | None
    mteb_task: str | None
    subsets: list[str]
    splits: list[str]
    context_splits: list[str]
    languages: dict[str, list[str]]
    language_origin: dict[str, str]  # per subset: where its languages were learnt
    text_fields: list[str]
    score_range: list[float] | None
    license: str | None
    citation: str
    # the task type's evaluation settings under a protocol (evaluation seeds and the like)
    protocol: dict[str, Any]
    row_limit: int | None
    # evaluate's results only: the published release the rows were read from, and a
    # multilingual dataset's subsets pooled into one (hteb)
    release: dict[str, str]
    pooled_subsets: list[str]


class PromptRecord(TypedDict):
    """One prompt a variant used: where it came from, its text and that text's sha256."""

    origin: str
    sha256: str
    text: str


class GeneratorModel(TypedDict, total=False):
    """The generator's model as its backend describes it (`Backend.describe`): its id and
    what pins its outputs (a digest, a file, the engine, the precision). Every key is in
    every cache key and settings hash, so a key is added only where it changes outputs."""

    id: Required[str]
    digest: str | None  # ollama's model digest, or a GGUF file's sha256
    num_ctx: int | None  # ollama's context window, when set
    file: str  # the GGUF file of a repository
    package: str  # `dist==version` of a packaged model
    path: str  # where a model named by a path was read from
    engine: str  # the embedded backend's llama.cpp engine and its version
    runtime: Literal["vllm"]
    dtype: str  # vLLM's precision
    served_as: str  # how vLLM serves a GGUF file


class GeneratorBackend(TypedDict, total=False):
    """The backend that ran the model: its name and its library or server versions."""

    name: Required[str]
    base_url: str  # openai
    httpx: str
    host: str  # ollama
    server_version: str
    ollama_client: str
    vllm: str  # vllm
    max_model_len: int
    engine_args: dict[str, object]
    llama_cpp: str  # embedded
    transformers: str
    torch: str
    max_model_length: int  # an imported HTEB pair's generator


class BackendDescription(TypedDict):
    """What a backend's `describe()` gives: its model and itself."""

    model: GeneratorModel
    backend: GeneratorBackend


# How a call's token budget is set: grown with its input, or flat (text/transforms.py).
BudgetMode = Literal["grown", "flat"]


class SamplingRecord(TypedDict, total=False):
    """A variant's sampling settings (`Sampling.as_dict`); top_k and budgets only where
    they differ from their defaults, so older hashes hold. An imported HTEB pair's is
    empty (HTEB's files do not record it)."""

    temperature: float | None
    top_p: float | None
    max_new_tokens: int | None
    top_k: int | None
    budgets: BudgetMode
    hteb_request: dict[str, object]  # what HTEB's engine adds to every request (hteb_requests)


class ConfigRecord(TypedDict, total=False):
    """One config of a run folder: its kind, subset and row count per split, and for a
    variant how it was made (transform, seed, prompts, generator, sampling, languages)
    and how its rows came out (status counts per split)."""

    kind: Required[ConfigKind]
    subset: Required[str]
    rows: Required[dict[str, int]]
    settings_sha256: str
    transform: str
    transform_version: int
    meaning: str  # a control's effect on meaning
    rule: str  # a control's rule, in words
    axis: Axis | None
    calls: int
    seed: int
    prompt_variant: int | None
    prompts: list[PromptRecord]
    token_budgets: list[str]
    max_new_tokens: int | None
    budget_growth: int
    model: GeneratorModel  # the generator's own description (backend.describe)
    backend: GeneratorBackend
    sampling: SamplingRecord
    max_attempts: int
    source_language: str | None
    source_languages: dict[str, str | None]
    language_pool: list[str]
    target_languages: list[str]
    pivot_languages: list[str]
    status_counts: dict[str, dict[str, int]]
    hteb: dict[str, Any]  # an imported HTEB pair: its metadata, file name and sha256


class ShardRecord(TypedDict):
    """Which shard of a sharded gen a run folder is: `index` of `count`."""

    index: int
    count: int


class RunExtras(TypedDict, total=False):
    """The keys of shiftbench.json that only some runs have."""

    protocol: dict[str, Any]  # the --protocol preset gen ran under
    rewrite: list[str]  # the parts rewritten, when not only the scored texts
    shard: ShardRecord


class RunMeta(RunExtras, total=False):
    """A run folder's shiftbench.json."""

    format: Required[int]
    shiftbench_version: Required[str]
    source: Required[SourceRecord]
    configs: Required[dict[str, ConfigRecord]]


class MeasureRecord(TypedDict, total=False):
    """One measure's summary over a config's (row, field) pairs in validation.json: the
    scorer's own description (kind, model, prompt hash, ...) beside these keys."""

    kind: Required[str]
    scored: Required[int]
    unscored: Required[int]
    problems: Required[dict[str, int]]  # why pairs went unscored, with their counts
    mean: Required[float | None]
    sd: Required[float | None]


class ExampleRecord(TypedDict, total=False):
    """A failed text validation.json shows as an example of its check."""

    split: Required[str]
    row_id: Required[Any]
    field: Required[str]
    original: Required[str]
    output: Required[str]
    language: str | None
    detected: str | None
    finish_reason: str | None


class ConfigValidationRecord(TypedDict, total=False):
    """What validate found in one config: rates of each check, languages, edit distance,
    measures and example failures."""

    transform: Required[str]
    axis: Axis | None
    seed: int | None
    model: str | None
    settings_sha256: str | None
    rows: Required[int]
    error_counts: Required[dict[str, int]]
    error_rates: Required[dict[str, float]]
    failed_rows: Required[int]
    total_error_rate: Required[float]
    identical_rows: int  # back-translation, where an unchanged output is a result
    identical_rate: float
    mean_edit_distance: Required[float]
    detected_languages: dict[str, int]
    not_checked: dict[str, int]
    unchecked_languages: dict[str, int]
    examples: Required[dict[str, list[ExampleRecord]]]
    measures: dict[str, MeasureRecord]
    # the default meaning check (validate/meaning.py): a warning apart from the checks
    meaning: dict[str, Any]


class LanguageIdRecord(TypedDict, total=False):
    """The language identifier validate used, and its thresholds."""

    name: Required[str]
    min_letters: Required[int]
    dense_weight: float
    expected_share: float
    languages: list[str]


class ValidationReport(TypedDict, total=False):
    """A run folder's validation.json."""

    format: int
    shiftbench_version: Required[str]
    language_id: Required[LanguageIdRecord]
    checks: Required[list[str]]
    configs: Required[dict[str, ConfigValidationRecord]]


class RankFigures(TypedDict):
    """EvalRank's figures with one similarity: where a pair's partner ranks."""

    mrr: float
    hits_at_1: float
    hits_at_3: float


class EvalRankFigures(TypedDict, total=False):
    """EvalRank on an STS config's rows (`pairs` 0: no positive pair to rank)."""

    pairs: Required[int]
    background: int  # the sentences ranked
    cosine: RankFigures
    l2: RankFigures


class EvalRankRecord(EvalRankFigures, total=False):
    """A record's `evalrank`: the figures, how positives were read, and for a variant the
    original's figures on the same rows."""

    positives: Required[str]  # evalrank.top_quarter's reading
    centred: Required[bool]
    original_same_rows: EvalRankFigures


class FaithfulRecord(TypedDict, total=False):
    """A record's `faithful`: a transformation again on its certified rows alone."""

    criterion: Required[str]
    rows: Required[int]
    main_score: Required[float | None]
    original_same_rows: Required[float | None]
    delta: Required[float | None]
    ci95: Required[list[float] | None]
    note: str  # why there is no figure (too few rows for the metric)
    context_rows: dict[str, int]  # a rewritten context split's certified rows


class ScoreRecord(TypedDict, total=False):
    """One model's scores on one config and split in results.json (and in mteb's layout
    beside it): every metric, the main score, and for a variant its change from the
    original on the same rows with that change's bootstrap interval."""

    config: Required[str]
    kind: Required[ConfigKind]
    subset: Required[str]
    split: Required[str]
    transform: str | None
    axis: Axis | None
    seed: int | None
    prompt_variant: int | None  # None for the original
    rows: Required[int]  # rows scored (a variant's usable rows)
    rows_total: int
    scores: Required[dict[str, float]]
    main_score: Required[float]
    original_same_rows: float | None
    delta: float | None
    self_retrieval: dict[str, float] | None
    evalrank: EvalRankRecord | None
    per_seed: dict[str, float]  # each evaluation seed's main score, where several ran
    ci95: list[float] | None
    interval: str  # "percentile" or "expanded", where there is an interval
    delta_replicates: list[float | None] | None  # null: an undefined draw
    resamples: int | None
    usable_draws: int | None
    restored: int  # failed texts scored with their original in their place (hteb)
    faithful: FaithfulRecord  # the delta again on the rows certified faithful
    rewritten: list[str]  # a ranking variant's sides: queries, corpus or both
    partial: bool  # a figure with one side rewritten (query-side, corpus-side)
    evaluation_time: float
    protocol: str


class ModelResults(TypedDict):
    """One encoder in results.json: its description and its records."""

    model: dict[str, Any]  # the encoder's own description (Encoder.describe)
    results: list[ScoreRecord]


class ScoringRecord(TypedDict):
    """How evaluate scored (results.json's `protocol`): the preset's scoring choices, and
    where the choice came from (core/protocols.py's ScoringProtocol writes and reads it)."""

    name: str
    classification_scoring: str
    retrieval_scoring: str
    failed_rows: str
    clustering_scoring: str
    subsets: str
    precision: str
    main_scores: dict[str, str]
    chosen_by: Literal["--protocol", "run folder", "default"]
    run_folder_protocol: str | None
    overrides_run_folder: bool


class ResultsDocument(TypedDict, total=False):
    """An evaluate results folder's results.json."""

    shiftbench_version: Required[str]
    mteb_version: str
    target: Required[str]
    source: Required[SourceRecord]
    task_type: Required[str]
    main_score: Required[str]
    models: Required[list[ModelResults]]
    protocol: ScoringRecord


class ReportSummary(TypedDict, total=False):
    """A results folder's summary.json: every figure the report prints, as data. Each
    list holds one object per row of the report's table of the same name."""

    datasets: Required[list[str]]  # each results document's dataset label, in order
    shared_sources: list[SharedSource]  # sources that several documents score
    sides: list[SideRow]  # query-side and corpus-side figures (ranking)
    interval: Required[str]  # percentile or expanded
    aggregation: Required[str]  # per-dataset (shiftbench) or per-transformation (hteb)
    units: Required[list[UnitRecord]]  # per model, dataset and subset
    models: Required[dict[str, ModelFigures]]  # per model: original, axes, total, ranks
    tests: Required[list[TransformTest]]
    baseline_tests: Required[list[BaselineTest]]
    median_abs_delta: Required[list[MedianAbsDelta]]
    kendall_per_dataset: Required[list[KendallPerDataset]]
    kendall: Required[list[KendallRow]]
    split_half: Required[SplitHalf | None]
    split_half_delta: Required[SplitHalf | None]
    prompt_sensitivity: Required[list[PromptSensitivityRow]]


class BatchDescription(TypedDict, total=False):
    """A human-eval batch folder's batch.json: what was sampled from which run, how."""

    format: int
    shiftbench_version: Required[str]
    run: Required[str]  # the run folder, resolved
    source: Required[dict[str, Any]]  # its name, dataset path and revision
    scheme: Required[dict[str, Any]]  # the rating scheme (criteria, scales, prompts)
    seed: Required[int]
    raters: Required[int]
    per_stratum: int
    controls_per_batch: Required[int]
    tolerance: float
    strata: Required[dict[str, dict[str, int]]]  # per stratum: items available, sampled
    # the strata that had fewer items than per_stratum asked: asked, sampled (all there were)
    short_strata: dict[str, dict[str, int]]
    items_per_batch: Required[int]
    # what an export adds to its own copy (never written back to batch.json)
    items_per_hit: int
    prolific: dict[str, Any]


class HumanEvalReport(TypedDict, total=False):
    """A batch folder's human_eval.json: raters screened, then per criterion and group
    the ratings' mean, acceptance and agreement."""

    format: int
    shiftbench_version: Required[str]
    run: Required[str]
    drift_correlation: list[dict[str, Any]]
    scheme: str | None
    threshold: Required[float]
    weights: Required[str]
    raters: Required[dict[str, Any]]  # per rater: kept, controls rated, misses
    kept_raters: Required[list[str]]
    excluded_raters: Required[list[str]]
    rows: Required[list[dict[str, Any]]]


class ProbeDocument(TypedDict, total=False):
    """A probe results folder's probes.json: every figure of the alignment probes."""

    shiftbench_version: Required[str]
    targets: Required[list[str]]
    datasets: Required[list[dict[str, Any]]]
    seed: Required[int]
    random_pairs: dict[str, Any]
    epsilons: Required[list[float]]
    distinction_grids: dict[str, Any]
    measures: Required[dict[str, Any]]
    adjustments: dict[str, Any]
    negation_pairs: dict[str, Any]  # the human-written pairs' file and count, when given
    models: Required[list[dict[str, Any]]]


def present(value: T | None, what: str) -> T:
    """A value every record of its kind holds where the type allows None for others (a
    variant's delta, a transform's axis): the value, or ValueError naming what is missing."""
    if value is None:
        raise ValueError(f"the record has no {what}")
    return value


def plain(record: SourceRecord | ConfigRecord | RunMeta) -> dict[str, Any]:
    """A record as a plain dict, for a stage that adds keys of its own to its working copy
    (evaluate marks a released source, a restored config): the one place a typed record
    becomes untyped, so every such crossing is named."""
    return dict(record)
