"""Options and defaults the commands share; every default is a stage settings object's own."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from shiftbench.core.settings import bound, declarations
from shiftbench.evaluate.settings import EvalSettings
from shiftbench.gen.api import GenSettings

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
GEN = GenSettings()  # gen's option defaults are the settings' own


def option_type(owner: Any, name: str) -> click.ParamType:
    """The click type of a settings field's bound: the range or the choices, as written
    once on the field (see shiftbench.core.settings)."""
    limit = bound(owner, name)
    if limit is None:
        raise LookupError(f"{owner.__name__}.{name} has no bound")
    if limit.choices:
        return click.Choice(list(limit.choices))
    opens = {"min_open": limit.low_open, "max_open": limit.high_open}
    if limit.kind is int:
        low, high = (None if v is None else int(v) for v in (limit.low, limit.high))
        return click.IntRange(low, high, **opens)
    return click.FloatRange(limit.low, limit.high, **opens)


class OutputFolder(click.Path):
    """A folder the command writes (it need not exist yet): refused before any work when a
    part of it is a file or it cannot be written (writes.unwritable)."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from shiftbench.core.data.writes import unwritable

        path = Path(os.fsdecode(super().convert(value, param, ctx)))
        problem = unwritable(path)
        if problem:
            self.fail(f"{path}: {problem}", param, ctx)
        return path


class NamedResults(click.Path):
    """`[NAME=]DIR`, a results folder (or its results.json) with the name its one model is
    to be shown under, as (NAME or None, DIR): DIR must exist; a path that exists whole is
    a path, '=' and all."""

    name = "[NAME=]DIR"

    def __init__(self) -> None:
        super().__init__(exists=True)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from shiftbench.core.models.names import split_named

        if isinstance(value, tuple):  # converted already
            return value
        name, where = split_named(str(value), "RESULTS", "results folder")
        return name, Path(os.fsdecode(super().convert(where, param, ctx)))


def source_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options that pick what to read from a source (shared by gen and evaluate)."""
    options = [
        click.option(
            "--task-type",
            default=None,
            metavar="TYPE",
            help="Task type of a local folder (STS, PairClassification, "
            "Classification, Clustering, Retrieval, Reranking, Summarization).",
        ),
        click.option(
            "--data-dir",
            default=None,
            metavar="DIR",
            help="Local copy (Hub layout) of an MTEB task's dataset, read instead of "
            "the Hub; the task's metadata still comes from mteb.",
        ),
        click.option(
            "--subset",
            "subsets",
            multiple=True,
            metavar="NAME",
            help="Subset (Hub config) to use; repeat for several. Default: all.",
        ),
        click.option(
            "--split",
            "splits",
            multiple=True,
            metavar="NAME",
            help="Split to use; repeat for several. Default: mteb's eval splits "
            "(a local folder: test).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def models_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """The encoders to score (evaluate's and probe's -m): what is scored, not a setting
    (the encoder settings are EncoderSettings' fields)."""
    return click.option(
        "--model",
        "-m",
        "models",
        multiple=True,
        required=True,
        metavar="[NAME=]MODEL",
        help="sentence-transformers model (Hub name or local path); mteb:NAME for a model "
        "of mteb's registry, loaded and prompted as mteb does; or openai:NAME[@URL] for a "
        "model behind an OpenAI-compatible embeddings endpoint (URL default "
        "$OPENAI_BASE_URL or http://127.0.0.1:8000/v1; API key from $OPENAI_API_KEY); "
        "repeatable. NAME= names it in tables, folders, plots and cards (e.g. "
        "-m mini=/models/ft-3; at most 100 characters); without it, a local model is "
        "named by its model card or config, else its folder's name, never its path.",
    )(func)


# report's --plots is evaluate's, declared on its settings field
plots_option = click.option(
    "--plots/--no-plots",
    default=True,
    show_default=True,
    help=next(d.help for f, d in declarations(EvalSettings) if f.name == "plots"),
)


def quiet_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """-q after the command's name; 'shiftbench -q COMMAND' means the same."""
    return click.option(
        "--quiet", "-q", is_flag=True, callback=_quiet_here_or_at_root, help="No progress bars."
    )(func)


def output_option(help: str, *, required: bool = False) -> Callable[..., Any]:
    """-o/--output, the folder a command writes: `required`, or None when not given."""
    given: dict[str, Any] = {"required": True} if required else {"default": None}
    return click.option("--output", "-o", type=OutputFolder(), **given, help=help)


def _quiet_here_or_at_root(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    return value or bool(ctx.find_root().params.get("quiet"))


# commands that generate: a row finished before an interrupt is in the generation cache
