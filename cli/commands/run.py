"""run and init: a whole release from one spec file, and a starter spec."""

from __future__ import annotations

from pathlib import Path

import click

from shiftbench.cli.commands.options import (
    CONTEXT,
    quiet_option,
)
from shiftbench.errors import InputError
from shiftbench.runner.spec import STAGES


@click.command("run", context_settings=CONTEXT)
@click.argument("spec_file", metavar="SPEC", type=click.Path(path_type=Path))
@click.option(
    "--until",
    type=click.Choice(list(STAGES)),
    default=None,
    help="Stop after this stage (gen, validate, human-eval, evaluate, card, publish).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (rows, texts, generator calls, estimated tokens and time, "
    "finished stages) and run nothing.",
)
@quiet_option
def run(spec_file: Path, until: str | None, dry_run: bool, quiet: bool) -> None:
    """Make a release from one SPEC file: gen, validate, human-eval, evaluate, card, publish.

    Every stage runs with the spec's settings into one folder per source under the
    spec's output (run/, human-eval/, results/, state.json); evaluate runs when the spec
    names evaluate.models, and the card and release carry its scores. A re-run skips
    every stage that finished on the same inputs, and gen's cache keeps the rows of an
    interrupted run.
    The run stops when validation finds more errors than validate.max_error_rate allows.
    'shiftbench init' writes a commented starter spec.
    """
    from shiftbench.runner.pipeline import execute, plan
    from shiftbench.runner.spec import read_spec

    spec = read_spec(spec_file)
    if dry_run:
        click.echo(plan(spec, until))
        return
    execute(spec, until, quiet=quiet)


@click.command("init", context_settings=CONTEXT)
@click.argument(
    "spec_file", metavar="SPEC", type=click.Path(path_type=Path), default="shiftbench.yaml"
)
@click.option("--force", is_flag=True, help="Replace SPEC when it exists.")
def init(spec_file: Path, force: bool) -> None:
    """Write SPEC, a commented starter spec for 'shiftbench run' (default: shiftbench.yaml).

    It lists every key with its default and help; as written, it rewrites the packaged
    sample with the default embedded generator.
    """
    from shiftbench.cli.commands.specdoc import starter
    from shiftbench.core.data.writes import unwritable

    if spec_file.is_dir():  # --force replaces a file, never a folder
        raise InputError(
            f"{spec_file} is a folder; name the spec file to write, e.g. "
            f"{spec_file / 'shiftbench.yaml'}"
        )
    if spec_file.exists() and not force:
        raise InputError(f"{spec_file} exists; pass --force to replace it")
    if spec_file.parent != Path() and not spec_file.parent.is_dir():
        # a file where a folder of the path belongs is named as what it is
        file = next((p for p in spec_file.parents if p.exists() and not p.is_dir()), None)
        if file is not None:
            raise InputError(f"{spec_file}: {file} is a file, not a folder")
        raise InputError(f"folder {spec_file.parent} does not exist")
    problem = unwritable(spec_file.parent)
    if problem:
        raise InputError(f"{spec_file}: {problem}")
    root = click.get_current_context().find_root().command  # the tree init is part of
    try:
        spec_file.write_text(starter(spec_file.name, root), encoding="utf-8")
    except PermissionError:  # a file this user may not write (--force)
        raise InputError(f"{spec_file}: no permission to write it") from None
    click.echo(f"wrote {spec_file}; run it with: shiftbench run {spec_file}")
