"""validate, compare, judge-calibrate and measure-checks: check run folders, compare
generators, pick a judge, measure how reliable the checks are."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from shiftbench.cli.commands.from_settings import (
    settings_options,
    settings_sections,
    settings_values,
)
from shiftbench.cli.commands.options import (
    CONTEXT,
    option_type,
    output_option,
    quiet_option,
    source_options,
)
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.errors import InputError
from shiftbench.validate.settings import (
    VALIDATE_SECTIONS,
    CalibrateSettings,
    MeasureChecksSettings,
    ValidateSettings,
)

MEASURE = MeasureChecksSettings()


def _measure_option(name: str, help: str) -> Callable[..., Any]:
    """measure-checks' option of MeasureChecksSettings field `name`: its bound, its default
    shown."""
    return click.option(
        f"--{name.replace('_', '-')}",
        type=option_type(MeasureChecksSettings, name),
        default=getattr(MEASURE, name),
        show_default=True,
        help=help,
    )


@click.command(
    cls=SectionedCommand,
    sections=settings_sections(ValidateSettings, VALIDATE_SECTIONS, {}),
    context_settings=CONTEXT,
)
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@settings_options(ValidateSettings, skip=("quiet",))
@quiet_option
def validate(runs: tuple[Path, ...], quiet: bool, **given: object) -> None:
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

    settings = ValidateSettings(**settings_values(ValidateSettings, given), quiet=quiet)
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
@output_option("Folder to write comparison.json and comparison.md into.")
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
# the judge options, JudgeSettings' (calibration always rates similarity: no --judge-mode)
@settings_options(CalibrateSettings, skip=("quiet",))
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
    gold_range: str | None,
    output: Path | None,
    quiet: bool,
    **given: object,
) -> None:
    """Rate the gold pairs of an STS SOURCE with each --judge (and --paraplue scorer) and
    compare with the gold.

    Prints Spearman (with a 95% bootstrap interval) and Pearson correlation with the gold
    scores, the mean absolute error on the judge's 0-5 scale, and per gold-score bin the
    error and the mean rating; this is how to pick a judge without human labels.
    """
    from shiftbench.core.data.sources import load_source
    from shiftbench.validate.api import calibrate_judges
    from shiftbench.validate.calibrate import format_report

    settings = CalibrateSettings(
        **settings_values(CalibrateSettings, given),
        gold_range=parse_range(gold_range) if gold_range else None,
        quiet=quiet,
    )
    if not settings.judges and not settings.paraplue:
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
@_measure_option(
    "cap", "Texts (or near-paraphrase pairs) per dataset and language checked for false alarms."
)
@_measure_option(
    "plant_cap", "Texts per dataset and language each kind of failure is planted into."
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
