"""validate as a library: run folders in, their validation reports out.

`validate_runs(runs, ValidateSettings(...))` does what `shiftbench validate` does (the automatic
checks, and the drift, judge and ParaPLUIE measures when asked) and writes the same
validation.json, validation.md and validation/<config>.jsonl into every run folder:

    >>> from shiftbench import ValidateSettings, validate_runs
    >>> result = validate_runs(["runs/sample"], ValidateSettings(judges=("embedded",)))
    >>> for c in result.configs:
    ...     print(c.config, c.error_rate, c.measures)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shiftbench.core.data.sources import Source
from shiftbench.core.messages import counted, report
from shiftbench.core.records import ConfigValidationRecord, ValidationReport
from shiftbench.errors import InputError, RuntimeFault
from shiftbench.validate.meaning import MEANING_CHANGED
from shiftbench.validate.settings import CalibrateSettings, JudgeSettings, ValidateSettings

if TYPE_CHECKING:
    # calibrate imports scipy: only its record's name is needed here
    from shiftbench.validate.calibrate import CalibrationRecord
    from shiftbench.validate.report import Measure

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MeasureSummary:
    """One measure (drift, a judge, a ParaPLUIE scorer) over one config's rows."""

    mean: float | None
    sd: float | None
    scored: int
    unscored: int


@dataclass(frozen=True)
class ConfigValidation:
    """One config of one run folder, as validation.json summarises it.

    Attributes:
        run: The run folder.
        config: The config name.
        rows: Rows checked.
        error_rate: Share of rows that failed at least one check.
        error_rates: Per check, the share of rows that failed it.
        mean_edit_distance: Mean normalised edit distance from the original.
        measures: Per measure key, its mean, SD and counts.
        meaning_changed_rate: Share of the rows the meaning check judged that it found
            `meaning-changed` (a warning, not in `error_rate`); None: none judged.
        record: Everything validation.json holds for this config.
    """

    run: Path
    config: str
    rows: int
    error_rate: float
    error_rates: dict[str, float]
    mean_edit_distance: float
    measures: dict[str, MeasureSummary]
    meaning_changed_rate: float | None
    record: ConfigValidationRecord = field(repr=False, compare=False)


@dataclass(frozen=True)
class ValidateResult:
    """What validate wrote: per run folder its report, and every config's summary.

    Attributes:
        configs: Every config of every run, in order (configs an earlier validation
            checked with the same settings are carried over and listed too).
        reports: Run folder -> validation.json as written.
        over_limit: "run/config (rate)" for each config above `max_error_rate`.
    """

    configs: tuple[ConfigValidation, ...]
    reports: dict[Path, ValidationReport] = field(repr=False, compare=False)
    over_limit: tuple[str, ...] = ()


class TooManyErrors(RuntimeFault):
    """A config's total error rate is above `max_error_rate`; the reports are written all
    the same, and `result` holds them."""

    def __init__(self, message: str, result: ValidateResult) -> None:
        super().__init__(message)
        self.result = result


TABLE_HEADER = (
    f"{'run':<24} {'config':<28} {'rows':>6} {'errors':>7} {'95% interval':>16} {'edit dist':>9}"
)


def error_interval(c: ConfigValidation) -> tuple[float, float]:
    """The 95% Wilson interval of a config's error rate (its failed rows of its rows)."""
    from shiftbench.core.stats import wilson_interval

    failed = c.record.get("failed_rows", round(c.error_rate * c.rows))
    return wilson_interval(failed, c.rows)


def interval_text(low: float, high: float) -> str:
    """An interval of rates as the table and validation.md print it: `[8.1%, 32.4%]`."""
    return f"[{low:.1%}, {high:.1%}]"


def table_lines(c: ConfigValidation) -> list[str]:
    """The lines `shiftbench validate` prints for a config, under TABLE_HEADER."""
    lines = [
        f"{c.run.name:<24} {c.config:<28} {c.rows:>6} {c.error_rate:>7.1%} "
        f"{interval_text(*error_interval(c)):>16} {c.mean_edit_distance:>9.3f}"
    ]
    for key, m in c.measures.items():
        mean = "-" if m.mean is None else f"{m.mean:.3f}"
        sd = "" if m.sd is None else f" ± {m.sd:.3f}"
        lines.append(f"{'':<24}   {key}: {mean}{sd} ({m.scored} scored, {m.unscored} not)")
    meaning = c.record.get("meaning") if c.record else None
    if meaning and meaning.get("checked_rows"):
        lines.append(
            f"{'':<24}   {MEANING_CHANGED}: {meaning['changed_rate']:.1%} "
            f"({meaning['changed_rows']} of {meaning['checked_rows']} rows checked; a warning, "
            "not in errors)"
        )
    return lines


def table_printer() -> Callable[[ConfigValidation], None]:
    """An `on_config` callback that reports the table (core/messages.py) as each config
    finishes, its header once, first."""
    header = [TABLE_HEADER]

    def show(config: ConfigValidation) -> None:
        for line in [*header, *table_lines(config)]:
            report(log, line)
        header.clear()

    return show


def make_judges(settings: JudgeSettings) -> list[Any]:
    """One Judge per (spec, mode) and one ParaPLUIE scorer per spec, every backend built
    and loaded once."""
    from shiftbench.validate.judge import Judge, build_backend
    from shiftbench.validate.paraplue import Paraplue

    backends: dict[str, object] = {}

    def backend(spec: str) -> Any:
        if spec not in backends:
            backends[spec] = build_backend(
                spec, base_url=settings.base_url, concurrency=settings.concurrency,
                batch_size=settings.batch_size, engine=settings.engine,
            )  # fmt: skip
        return backends[spec]

    made: list[Any] = []
    for spec in dict.fromkeys(settings.judges):
        made += [
            Judge(backend(spec), m, max_new_tokens=settings.judge_tokens,
                  scoring=settings.judge_scoring)
            for m in dict.fromkeys(settings.judge_modes)
        ]  # fmt: skip
    made += [Paraplue(backend(spec)) for spec in dict.fromkeys(settings.paraplue)]
    return made


def judge_cache(settings: JudgeSettings) -> Any:
    """The cache judge answers go to (in memory only with `no_cache`)."""
    from shiftbench.llm.cache import GenerationCache, default_cache_dir

    return GenerationCache(
        None if settings.no_cache else (settings.cache_dir or default_cache_dir())
    )


def _config(run: Path, name: str, c: ConfigValidationRecord) -> ConfigValidation:
    return ConfigValidation(
        run=run,
        config=name,
        rows=c["rows"],
        error_rate=c["total_error_rate"],
        error_rates=dict(c.get("error_rates", {})),
        mean_edit_distance=c["mean_edit_distance"],
        measures={
            key: MeasureSummary(m["mean"], m["sd"], m["scored"], m["unscored"])
            for key, m in c.get("measures", {}).items()
        },
        meaning_changed_rate=(c.get("meaning") or {}).get("changed_rate"),
        record=c,
    )


def validate_runs(
    runs: Sequence[str | Path],
    settings: ValidateSettings | None = None,
    *,
    on_config: Callable[[ConfigValidation], None] | None = None,
) -> ValidateResult:
    """Check every transformed config of each run folder and write its reports.

    Args:
        runs: Run folders written by gen.
        settings: What to check and measure; None for the defaults.
        on_config: Called with each config's summary as soon as its run is done.

    Returns:
        Every config's summary and each run's validation.json.

    Raises:
        InputError: A run folder, config, marker file or language identifier that is not
            there or not valid; raised before any run is checked.
        TooManyErrors: Some config is above `max_error_rate` (after every report is written).
    """
    from shiftbench.core.text.langid import get_identifier
    from shiftbench.validate.report import validate_run

    s = settings or ValidateSettings()
    folders = _planned(runs, s)
    _use_markers(s)
    identifier = get_identifier(s.langid)
    measures = _measures(s)
    meaning = meaning_check(s)
    cache = judge_cache(s)
    configs: list[ConfigValidation] = []
    reports: dict[Path, ValidationReport] = {}
    gate: list[str] = []
    meaning_gate: list[str] = []
    try:
        for run in folders:
            log.info("validate %s with %d measure(s)", run, len(measures))
            report = validate_run(
                run, identifier, configs=s.configs, examples=s.examples,
                measures=tuple(measures), cache=cache, quiet=s.quiet, meaning=meaning,
            )  # fmt: skip
            reports[run] = report
            for name, c in report["configs"].items():
                configs.append(_config(run, name, c))
                if on_config is not None:
                    on_config(configs[-1])
            over, over_meaning = _over(run, report, s)
            gate += over
            meaning_gate += over_meaning
    finally:
        cache.close()
    result = ValidateResult(tuple(configs), reports, tuple(gate + meaning_gate))
    said = _over_gates(s, gate, meaning_gate)
    if said:
        raise TooManyErrors("; ".join(said), result)
    return result


def _planned(runs: Sequence[str | Path], s: ValidateSettings) -> list[Path]:
    """The run folders, each checked to hold the configs to validate (before any is)."""
    from shiftbench.validate.report import plan

    folders = [Path(r) for r in runs]
    if not folders:
        raise InputError("name at least one run folder to validate")
    for run in folders:
        plan(run, s.configs)
    return folders


def _over(run: Path, report: ValidationReport, s: ValidateSettings) -> tuple[list[str], list[str]]:
    """The run's configs above --max-error-rate and those above --max-meaning-changed-rate,
    each as `run/config (rate)`."""
    from shiftbench.validate.report import over_limit, over_meaning_limit

    over: list[str] = []
    over_meaning: list[str] = []
    if s.max_error_rate is not None:
        over = [f"{run.name}/{n} ({r:.1%})" for n, r in over_limit(report, s.max_error_rate)]
    if s.max_meaning_changed_rate is not None:
        over_meaning = [
            f"{run.name}/{n} ({r:.1%})"
            for n, r in over_meaning_limit(report, s.max_meaning_changed_rate)
        ]
    return over, over_meaning


def _use_markers(s: ValidateSettings) -> None:
    """Loads the settings' marker file, if any, in place of the packaged markers."""
    from shiftbench.core.text.checks import use_markers

    if s.markers_file is not None:
        try:
            use_markers(str(s.markers_file))
        except FileNotFoundError:
            raise InputError(f"marker file {s.markers_file} does not exist") from None
        except (json.JSONDecodeError, AttributeError, TypeError) as exc:
            raise InputError(
                f"marker file {s.markers_file} is not a marker table ({exc})"
            ) from None


def _measures(s: ValidateSettings) -> list[Measure]:
    """The measures the settings ask for, loaded: embedding drift, then the judges."""
    from shiftbench.core.progress import quieted

    measures: list[Measure] = []
    if s.drift_encoder is not None:
        from shiftbench.validate.drift import Drift

        measures.append(Drift(s.drift_encoder, batch_size=s.batch_size, progress=not s.quiet))
    with quieted(s.quiet):  # a judge's model load names itself
        measures += make_judges(s)
    return measures


def _over_gates(s: ValidateSettings, gate: list[str], meaning_gate: list[str]) -> list[str]:
    """What the run breaks of --max-error-rate and --max-meaning-changed-rate, a clause
    per limit broken, each naming the configs above it."""
    said = []
    if gate:
        assert s.max_error_rate is not None
        said.append(
            f"{counted(len(gate), 'config')} {'exceeds' if len(gate) == 1 else 'exceed'} "
            f"--max-error-rate {s.max_error_rate:.1%}: {', '.join(gate)}"
        )
    if meaning_gate:
        assert s.max_meaning_changed_rate is not None
        said.append(
            f"{counted(len(meaning_gate), 'config')} "
            f"{'exceeds' if len(meaning_gate) == 1 else 'exceed'} --max-meaning-changed-rate "
            f"{s.max_meaning_changed_rate:.1%}: {', '.join(meaning_gate)}"
        )
    return said


def meaning_check(settings: ValidateSettings) -> Any:
    """The meaning check of `settings`, its encoder loaded; None when it is off or its
    encoder cannot be loaded (a one-line warning says so, and validate goes on)."""
    if settings.meaning_encoder is None:
        return None
    from shiftbench.core.progress import quieted
    from shiftbench.validate.meaning import MeaningCheck

    try:
        with quieted(settings.quiet):  # the encoder's load names itself
            return MeaningCheck(
                settings.meaning_encoder, settings.meaning_threshold,
                batch_size=settings.batch_size,
            )  # fmt: skip
    except Exception as exc:  # any failure to load: the form checks still run
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if settings.meaning_encoder not in why:
            why = f"encoder {settings.meaning_encoder}: {why}"
        log.warning("meaning check skipped (the form checks still run): %s", why)
        return None


def calibrate_judges(
    source: Source,
    settings: CalibrateSettings,
    *,
    on_judge: Callable[[CalibrationRecord], None] | None = None,
) -> list[CalibrationRecord]:
    """Rate the gold pairs of an STS source with every judge and scorer of `settings` and
    compare with the gold scores.

    Args:
        source: An STS source, from `load_source`.
        settings: The judges and scorers; at least one is needed.
        on_judge: Called with each judge's calibration as soon as it is done.

    Returns:
        One calibration per judge: Spearman (with a 95% bootstrap interval) and Pearson
        correlation, mean absolute error on the 0-5 scale, and per gold-score bin the
        error and mean rating.
    """
    from shiftbench.validate.calibrate import calibrate, gold_pairs

    s = settings
    if not s.judges and not s.paraplue:
        raise InputError("name at least one --judge or --paraplue (e.g. --judge embedded)")
    pairs = gold_pairs(source, s.limit)
    scale = s.gold_range or (source.score_range or (0.0, 5.0))
    made = make_judges(s)
    cache = judge_cache(s)
    reports = []
    try:
        for judge in made:
            report = calibrate(judge, pairs, scale, cache, quiet=s.quiet, label=judge.key)
            report["source"] = {"name": source.name, "path": source.dataset_path,
                                "revision": source.revision}  # fmt: skip
            reports.append(report)
            if on_judge is not None:
                on_judge(report)
    finally:
        cache.close()
    return reports
