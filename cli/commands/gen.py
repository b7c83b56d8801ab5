"""gen and merge: rewrite a source into a run folder; join a sharded gen's folders."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from shiftbench.cli.commands.from_settings import (
    settings_options,
    settings_sections,
    settings_values,
)
from shiftbench.cli.commands.options import CONTEXT, OutputFolder, quiet_option, source_options
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.errors import InputError
from shiftbench.gen.settings import GEN_SECTIONS, GenSettings

# gen --help's sections: the settings' own (each field names its section), after the
# command's own options of that section
SECTIONS = settings_sections(
    GenSettings,
    (*GEN_SECTIONS, "Plan"),
    {
        "Source": ("task_type", "data_dir", "subsets", "splits", "source_language"),
        "Output": ("output",),
        "Plan": ("dry_run", "calibrate"),
    },
)


@click.command(cls=SectionedCommand, sections=SECTIONS, context_settings=CONTEXT)
@click.argument("source")
@source_options
@click.option(
    "--source-language",
    default=None,
    metavar="CODE[,CODE...]",
    help="Language of the source texts, overriding what the metadata, a local folder's card "
    "or subset names, or language ID say; one code per text field for a cross-lingual source.",
)
@click.option(
    "--output",
    "-o",
    type=OutputFolder(),
    default=None,
    help="Run folder to write or add to. Default: runs/<source>.",
)
@settings_options(GenSettings, skip=("output", "quiet"))
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check everything and print the plan: per config the unique texts, the calls of "
    "their first attempt, how many the cache answers and how many another config shares "
    "(greedy seeds), then the tokens to generate and their time, from the throughput the "
    "latest gen run of this backend and model measured on this machine; load no model and "
    "write nothing.",
)
@click.option(
    "--calibrate",
    is_flag=True,
    help="With --dry-run, when this backend and model have no measured throughput on this "
    "machine yet: measure one first with a few real calls (the model is loaded; the rows "
    "and the measurement are kept in the cache).",
)
@quiet_option
def gen(
    source: str,
    task_type: str | None,
    data_dir: str | None,
    subsets: tuple[str, ...],
    splits: tuple[str, ...],
    source_language: str | None,
    output: Path | None,
    dry_run: bool,
    calibrate: bool,
    quiet: bool,
    **given: object,
) -> None:
    """Write transformed variants of SOURCE into a run folder.

    SOURCE is an MTEB task name (e.g. STSBenchmark), a local folder in Hub layout (with
    --task-type), or "sample" for the small STS set that ships with shiftbench. The run
    folder gets a config "original" and one "<transform>-s<seed>" per transform and seed;
    load any of them with datasets.load_dataset(FOLDER, CONFIG).
    """
    from shiftbench.core.data.sources import load_source
    from shiftbench.gen.api import TooManyFailures, generate, plan_generation
    from shiftbench.gen.plan import format_plan

    if given["engine_args"] and given["backend"] != "vllm":
        raise InputError("--engine-arg applies to the vllm backend only")
    if calibrate and not dry_run:
        raise InputError("--calibrate goes with --dry-run (every gen run measures itself)")
    settings = GenSettings(**settings_values(GenSettings, given), output=output, quiet=quiet)
    resolved = load_source(
        source,
        task_type=task_type,
        data_dir=data_dir,
        subsets=subsets,
        splits=splits,
        source_language=source_language,
    )
    if output is None:  # the command's default; the Python API's is under the cache
        settings = replace(settings, output=Path("runs") / resolved.name)
    if dry_run:
        click.echo(format_plan(plan_generation(resolved, settings, calibrate=calibrate)))
        return
    try:
        result = generate(resolved, settings)
    except TooManyFailures as exc:
        click.echo(exc.result.summary())
        raise
    if result.configs:  # a call that made nothing logs its line itself (a REPORT line)
        click.echo(result.summary())


@click.command(context_settings=CONTEXT)
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    type=OutputFolder(),
    required=True,
    help="The run folder to write (must not exist).",
)
def merge(shards: tuple[Path, ...], output: Path) -> None:
    """Put SHARDS, the run folders of a sharded gen (--shard I/N), together into one.

    The result is byte for byte the folder one machine would have written.
    """
    from shiftbench.gen.merge import merge_shards

    names = merge_shards(list(shards), output)
    click.echo(f"merged {len(shards)} shards into {output}: {', '.join(names)}")
