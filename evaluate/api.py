"""evaluate as a library: encoders scored on a run folder, a release or a source.

`score_encoders(target, models, EvalSettings(...))` does what `shiftbench evaluate` does
and writes the same results folder; the command calls it (through `Evaluation`, which
reads and checks the target first and then scores with a callback for progress):

    >>> from shiftbench import score_encoders
    >>> result = score_encoders("runs/sample", ["sentence-transformers/all-MiniLM-L6-v2"])
    >>> for row in result.scores:
    ...     print(row.config, row.score, row.delta)
    >>> frame = result.to_dataframe()  # one row per model, config, split and subset

A model is a name or a model already loaded (a `SentenceTransformer`, an object
`mteb.get_model` returns). From Python, the results folder goes under the user's cache
unless `output` names one (`default_output`); the commands' default is
shiftbench-results/<target> in the current folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from shiftbench.core.messages import option
from shiftbench.core.records import ProbeDocument, ReportSummary, ResultsDocument, ScoreRecord
from shiftbench.errors import InputError
from shiftbench.evaluate.settings import EncoderSettings, EvalSettings, ProbeRunSettings

if TYPE_CHECKING:
    from shiftbench.core.models.encoders import Encoder
    from shiftbench.evaluate.faithful import CertifiedRows

# EvalResult.to_dataframe's columns, in order
COLUMNS = (
    "model", "config", "kind", "transform", "axis", "seed", "split", "subset", "rows",
    "main_score_name", "main_score", "original_same_rows", "delta", "ci95_low", "ci95_high",
)  # fmt: skip


class EncoderOptions(TypedDict):
    """`Encoder`'s keyword arguments that the settings give."""

    batch_size: int
    device: str | None
    precision: str | None
    trust_remote_code: bool
    model_kwargs: dict[str, object]  # free-form: the model's own keyword arguments
    encode_kwargs: dict[str, object]
    prompts: dict[str, str]


def encoder_options(s: EncoderSettings, default_precision: str = "float32") -> EncoderOptions:
    """How the settings load and run an encoder, as `Encoder` takes it
    (`default_precision` where the settings name none)."""
    return {
        "batch_size": s.batch_size,
        "device": s.device,
        "precision": s.precision or default_precision,
        "trust_remote_code": s.trust_remote_code,
        "model_kwargs": s.model_kwargs,
        "encode_kwargs": s.encode_kwargs,
        "prompts": s.prompts,
    }


@dataclass(frozen=True)
class Interval:
    """A main score, its change from the original on the same rows, and the change's
    95% bootstrap interval (None without resamples)."""

    score: float
    delta: float | None = None
    ci95: tuple[float, float] | None = None


@dataclass(frozen=True)
class ConfigScore:
    """One model's main score on one config, split and subset.

    Attributes:
        model: The encoder, as named.
        config: The config ("original", "paraphrase-s1", ...).
        split: The split scored.
        subset: The subset scored ("default" for a dataset of one).
        kind: "original", "transform" or "control".
        transform: The transform (None for the original).
        axis: The robustness axis of the transform.
        seed: The variant's seed.
        rows: Rows scored (a variant's usable rows).
        score: The main score.
        original_same_rows: The original's main score on those same rows.
        delta: score - original_same_rows.
        ci95: The delta's 95% paired-bootstrap interval.
        record: Everything results.json holds for this score.
    """

    model: str
    config: str
    split: str
    subset: str
    kind: str
    transform: str | None
    axis: str | None
    seed: int | None
    rows: int
    score: float
    original_same_rows: float | None
    delta: float | None
    ci95: tuple[float, float] | None
    record: ScoreRecord = field(repr=False, compare=False)


@dataclass(frozen=True)
class ModelSummary:
    """One model over the run: the original's score and, per axis and in total, the mean
    variant score and change (report.md's axis table)."""

    model: str
    original: float | None
    axes: dict[str, Interval]
    total: Interval | None


@dataclass(frozen=True)
class EvalResult:
    """What evaluate scored and wrote.

    Attributes:
        folder: The results folder (results.json, summary.json, report.md, plots/).
        main_score: The task's main score ("cosine_spearman", "accuracy", ...).
        scores: Every model's score on every config and split, in order.
        models: Per model of the results folder, the axis summary: the models scored
            here and those the folder held already (it adds up the models evaluated into
            it).
        controls: Control configs, left to `shiftbench probe`.
        summary: summary.json as written (the statistics of every model in the folder).
    """

    folder: Path
    main_score: str
    scores: tuple[ConfigScore, ...]
    models: dict[str, ModelSummary]
    controls: tuple[str, ...]
    summary: ReportSummary = field(repr=False, compare=False)

    def to_dataframe(self) -> Any:
        """The scores as a pandas DataFrame: one row per model, config, split and subset
        (the rows of `scores`, in order), with the columns model, config, kind, transform,
        axis, seed, split, subset, rows, main_score_name (e.g. "cosine_spearman"),
        main_score (its value: `ConfigScore.score`), original_same_rows, delta, ci95_low
        and ci95_high (NaN where a value is None)."""
        import pandas as pd

        numbers = ("main_score", "original_same_rows", "delta", "ci95_low", "ci95_high")
        rows = [
            {
                "model": s.model,
                "config": s.config,
                "kind": s.kind,
                "transform": s.transform,
                "axis": s.axis,
                "seed": s.seed,
                "split": s.split,
                "subset": s.subset,
                "rows": s.rows,
                "main_score_name": self.main_score,
                "main_score": s.score,
                "original_same_rows": s.original_same_rows,
                "delta": s.delta,
                "ci95_low": s.ci95[0] if s.ci95 else None,
                "ci95_high": s.ci95[1] if s.ci95 else None,
            }
            for s in self.scores
        ]
        frame = pd.DataFrame(rows, columns=[*COLUMNS])
        return frame.astype({**dict.fromkeys(numbers, float), "seed": "Int64"})


def _interval(entry: Mapping[str, Any] | None) -> Interval | None:
    if not entry:
        return None
    ci = entry.get("ci95")
    return Interval(entry["score"], entry.get("delta"), (ci[0], ci[1]) if ci else None)


def _config_score(model: str, record: ScoreRecord) -> ConfigScore:
    ci = record.get("ci95")
    return ConfigScore(
        model=model,
        config=record["config"],
        split=record["split"],
        subset=record.get("subset", "default"),
        kind=record.get("kind", "original"),
        transform=record.get("transform"),
        axis=record.get("axis"),
        seed=record.get("seed"),
        rows=record["rows"],
        score=record["main_score"],
        original_same_rows=record.get("original_same_rows"),
        delta=record.get("delta"),
        ci95=(ci[0], ci[1]) if ci else None,
        record=record,
    )


class Evaluation:
    """A target read and checked, ready to score: every input fault has been raised by
    the time this exists, before any model loads."""

    def __init__(
        self,
        target: str | Path,
        settings: EvalSettings | None = None,
        *,
        results_root: Path | None = None,
    ) -> None:
        """Read and check `target` (`score_encoders`' Args). `results_root` holds the
        results folder when `settings.output` is None (`<results_root>/<target name>`);
        None: <cache>/results (the command passes shiftbench-results)."""
        from shiftbench.core.data.runfolder import is_run_folder, read_meta
        from shiftbench.core.data.sources import resolve_source
        from shiftbench.core.protocols import ORIGINAL_IN_PLACE, scoring_protocol, with_scoring
        from shiftbench.evaluate.collect import chosen_parts, collect, require_supported
        from shiftbench.evaluate.pool import POOLED, poolable, pooled, pooled_certified
        from shiftbench.evaluate.restore import with_originals_restored
        from shiftbench.evaluate.results import check_addable, default_output

        s = self.settings = settings or EvalSettings()
        if s.resamples < 0 or 0 < s.resamples < 1000:
            raise InputError(
                f"{option('resamples')} must be 0 (no intervals) or at least 1000, not "
                f"{s.resamples}"
            )
        self.target = str(target)

        def factory(spec: str) -> Any:
            return resolve_source(
                spec, task_type=s.task_type, data_dir=s.data_dir, subsets=s.subsets,
                splits=s.splits,
            )  # fmt: skip

        path = Path(self.target)
        folder_meta = read_meta(path) if path.is_dir() and is_run_folder(path) else None
        self.collection = chosen_parts(
            collect(self.target, factory, s.data_dir), tuple(s.splits), tuple(s.subsets)
        )
        self.scoring = scoring_protocol(s.protocol, folder_meta)
        self.collection.source = with_scoring(self.collection.source, self.scoring)
        if self.scoring.failed_rows == ORIGINAL_IN_PLACE:
            self.collection = with_originals_restored(self.collection)
        require_supported(self.collection)
        self.certified = self._certified()
        if self.scoring.subsets == POOLED and poolable(self.collection):
            if self.certified is not None:
                self.certified = pooled_certified(self.certified, self.collection)
            self.collection = pooled(self.collection)
        self.controls = tuple(
            c.name for c in self.collection.configs if c.meta["kind"] == "control"
        )
        self.folder = s.output or default_output(self.collection.label, results_root)
        check_addable(self.folder, self._document([]), self._interval())

    def _document(self, per_model: list[tuple[Encoder, list[ScoreRecord]]]) -> ResultsDocument:
        """results.json's document of these models' records, scored on this target."""
        from shiftbench.evaluate.results import results_document

        return {**results_document(self.collection, per_model), "protocol": self.scoring.record()}

    def _interval(self) -> str | None:
        """How this run's intervals are made; None when it makes none."""
        return self.settings.interval if self.settings.resamples else None

    def _precision(self, model: str) -> str:
        """The dtype a model's weights load in when --precision names none: the scoring
        protocol's for a model loaded here (an endpoint or an mteb registry model loads as
        it is served or registered, in float32 here)."""
        from shiftbench.core.models.encoders import loads_here

        return self.scoring.precision if loads_here(model) else "float32"

    def _options(self, given: str | Any) -> EncoderOptions:
        """How `Encoder` loads and runs a model given by name (`[NAME=]MODEL`: the
        protocol's precision unless one is named), or a model object (its own dtype unless
        one is named)."""
        from shiftbench.core.models.names import split_named

        s = self.settings
        if not isinstance(given, str):
            return {**encoder_options(s), "precision": s.precision}
        return encoder_options(s, self._precision(split_named(given, "--model")[1]))

    def _certified(self) -> CertifiedRows | None:
        """The rows `faithful` certifies."""
        from shiftbench.core.data.runfolder import is_run_folder
        from shiftbench.evaluate.faithful import CertifiedRows, certified, parse_faithful

        s = self.settings
        if s.faithful is None:
            if s.human_dirs:
                raise InputError(
                    f"{option('human_dirs', '--human-eval')} goes with {option('faithful')} human"
                )
            return None
        criterion = parse_faithful(s.faithful)
        if not is_run_folder(Path(self.target)):
            raise InputError(f"{option('faithful')} needs a run folder; {self.target} is not one")
        if s.human_dirs and not criterion.human:
            raise InputError(
                f"{option('human_dirs', '--human-eval')} goes with {option('faithful')} human"
            )
        fields = list(self.collection.source["text_fields"])
        rows = certified(Path(self.target), criterion, fields, tuple(s.human_dirs))
        return CertifiedRows(criterion.text, rows)

    def score(
        self,
        models: Sequence[str | Any],
        on_model: Callable[[str, list[ScoreRecord]], None] | None = None,
    ) -> EvalResult:
        """Score every model and add each to the results folder as soon as it is scored
        (so a fault in a later one keeps the finished ones; results.add_results: one
        writer at a time, the folder's other models kept). Every model loads before any
        is scored, so a bad name stops the run at once, as does a model the folder holds
        at another revision. `on_model(model, records)` sees each model's records as soon
        as they are scored."""
        from shiftbench.core.models.encoders import Encoder
        from shiftbench.evaluate.results import add_results, check_addable
        from shiftbench.evaluate.run import score_collection

        s = self.settings
        if not models:
            raise InputError("name at least one model to evaluate")
        encoders = [
            Encoder(
                given,
                cache_dir=s.cache_dir,
                progress=not s.quiet,
                **self._options(given),
            )
            for given in given_models(models)
        ]
        _named_once(encoders)
        folder = self.folder
        check_addable(
            folder, self._document([(encoder, []) for encoder in encoders]), self._interval()
        )
        per_model: list[tuple[Any, list[ScoreRecord]]] = []
        summary: ReportSummary | None = None
        for encoder in encoders:
            records = score_collection(
                self.collection,
                encoder,
                faithful=self.certified,
                resamples=s.resamples,
                resample_seed=s.resample_seed,
                interval=s.interval,
                evalrank_reading=(s.evalrank_positives, s.evalrank_centre),
                quiet=s.quiet,
            )
            for record in records:
                record["protocol"] = self.scoring.name
            per_model.append((encoder, records))
            if on_model is not None:
                on_model(encoder.name, records)
            summary = add_results(folder, self._document([(encoder, records)]), plots=s.plots)
        assert summary is not None  # there is at least one model (checked above)
        scores = tuple(
            _config_score(encoder.name, r) for encoder, records in per_model for r in records
        )
        summaries = {
            name: ModelSummary(
                name,
                entry.get("original"),
                {axis: i for axis, e in entry.get("axes", {}).items() if (i := _interval(e))},
                _interval(entry.get("total")),
            )
            for name, entry in summary["models"].items()
        }
        main = str(self.collection.source["main_score"])
        return EvalResult(folder, main, scores, summaries, self.controls, summary)


def given_models(models: Sequence[str | Any]) -> list[str | Any]:
    """The models in order, each once: names read as `[NAME=]MODEL` (encoder_names: a bad
    NAME, or two models shown under one name, refused before any model loads), objects by
    their identity."""
    from shiftbench.core.models.encoders import encoder_names

    kept = set(encoder_names([m for m in models if isinstance(m, str)]).values())
    seen: set[Any] = set()
    out: list[str | Any] = []
    for model in models:
        key = model if isinstance(model, str) else id(model)
        if key in seen or (isinstance(model, str) and model not in kept):
            continue
        seen.add(key)
        out.append(model)
    return out


def _named_once(encoders: Sequence[Any]) -> None:
    """Refuse two models shown by one name (a name and an object loaded from it): their
    results would be filed under the same name."""
    names = [e.name for e in encoders]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise InputError(f"two of the models given are named {twice}; score them one at a time")


def score_encoders(
    target: str | Path,
    models: Sequence[str | Any],
    settings: EvalSettings | None = None,
) -> EvalResult:
    """Score encoders on a target and write the results folder.

    The results folder is `settings.output`, or `<cache>/results/<target name>` when that
    is None (the cache: $SHIFTBENCH_CACHE_DIR, else ~/.cache/shiftbench); nothing is
    written into the current folder unless `output` says so. A folder that holds results
    of the same target adds these models to them.

    A model given as an object is scored as it is loaded (its device and dtype); it is
    named by the Hub id or folder it was loaded from (a SentenceTransformer) or mteb's
    name (`mteb:NAME`), and recorded with a hash of its weights as its revision (an mteb
    object: the revision its metadata names). Its vectors are cached (with
    `cache_dir`) under that hash, never shared with another object's.

    Args:
        target: A run folder (the original and every variant), a published release
            ORG/NAME@vX.Y.Z, or a source (MTEB task name, local folder, "sample").
        models: Sentence-transformers models: Hub ids or local folders, `mteb:NAME`,
            `openai:NAME@URL`, each as `NAME=MODEL` to be shown and recorded as NAME (a
            local folder is otherwise shown by its own name, never its path), or models
            already loaded (`SentenceTransformer` objects, objects `mteb.get_model`
            returns).
        settings: How; `EvalSettings()` for the defaults.

    Returns:
        The scores (`to_dataframe()` for a DataFrame), per-axis summaries and the results
        folder.

    Raises:
        InputError: Bad input; nothing written, no model loaded.
    """
    return Evaluation(target, settings).score(models)


@dataclass(frozen=True)
class ProbeResult:
    """What probe wrote: the results folder and probes.json as written."""

    folder: Path
    document: ProbeDocument = field(repr=False, compare=False)


def probe_encoders(
    targets: Sequence[str | Path],
    models: Sequence[str | Any],
    settings: ProbeRunSettings | None = None,
    *,
    results_root: Path | None = None,
) -> ProbeResult:
    """Task-free alignment probes (after ALIGN-SIM) of encoders on run folders or releases
    that hold control configs; several targets are several datasets of one probe run.

    Writes probes.json, probes.md, probe-rows.jsonl and the plots into the results folder:
    `settings.output`, or `<results_root>/<targets>-probes` when that is None
    (`results_root` None: <cache>/results under $SHIFTBENCH_CACHE_DIR or
    ~/.cache/shiftbench; the command passes shiftbench-results). `models` are taken as
    `score_encoders` takes them: names (`NAME=MODEL` shows MODEL as
    NAME) or loaded model objects.

    Raises:
        InputError: A target that is neither a run folder nor a release, or one without
            the configs a probe needs; raised before any model loads.
    """
    from shiftbench.core.models.encoders import Encoder
    from shiftbench.core.progress import bar
    from shiftbench.evaluate.collect import collect_generated
    from shiftbench.evaluate.probes.anchors import (
        MEASURES,
        ProbeSettings,
        gather_datasets,
        read_negation_pairs,
    )
    from shiftbench.evaluate.probes.figures import (
        Values,
        negation_pair_figures,
        probe_document,
        score,
        summarise_measures,
    )
    from shiftbench.evaluate.probes.outputs import write_probe_outputs
    from shiftbench.evaluate.results import default_output

    s = settings or ProbeRunSettings()
    if not models:
        raise InputError("name at least one model to probe")
    probe = ProbeSettings(s.epsilons, s.seed, s.paraphrases, s.min_score, s.random_pairs)
    collections = [collect_generated(str(target)) for target in targets]
    datasets = gather_datasets(collections, probe)
    human = read_negation_pairs(Path(s.negation_pairs)) if s.negation_pairs else None
    options = encoder_options(s)
    # a model object keeps its dtype unless one is named
    own_dtype: EncoderOptions = {**options, "precision": s.precision}
    encoders = [
        Encoder(
            given, cache_dir=s.cache_dir, progress=not s.quiet,
            **(options if isinstance(given, str) else own_dtype),
        )
        for given in given_models(models)
    ]  # fmt: skip
    _named_once(encoders)
    label = "+".join(d.label for d in datasets)
    folder = s.output or default_output(f"{label}-probes", results_root)
    values: list[tuple[Encoder, dict[str, dict[str, Values]]]] = []
    # a count per model, dataset and measure (the first measure embeds, the others reuse)
    total = len(encoders) * len(datasets) * len(MEASURES)
    with bar(total, f"probe {label}", unit="probe", quiet=s.quiet) as progress:
        for enc in encoders:
            by_measure: dict[str, dict[str, Values]] = {}
            for m in MEASURES:
                by_measure[m] = {}
                for d in datasets:
                    by_measure[m][d.label] = score(enc, d.anchors, m)
                    progress.update()
            values.append((enc, by_measure))
    figures = [(enc, summarise_measures(by_measure, probe.epsilons)) for enc, by_measure in values]
    if human is not None:
        for enc, by_measure_figures in figures:
            negation_pair_figures(enc, human, by_measure_figures)
    document = probe_document(datasets, probe, figures, human)
    write_probe_outputs(folder, document, datasets, values, s.plots)
    return ProbeResult(folder, document)
