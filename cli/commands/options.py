"""Options and defaults the commands share; every default is a stage settings object's own."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from shiftbench.core.settings import bound
from shiftbench.evaluate.api import EvalSettings, ProbeRunSettings
from shiftbench.gen.api import GenSettings
from shiftbench.validate.api import JudgeSettings, ValidateSettings

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
GEN = GenSettings()  # gen's option defaults are the settings' own
EVAL = EvalSettings()  # and evaluate's (probe shares the encoder options)
VAL = ValidateSettings()  # and validate's (judge-calibrate shares the judge options)
PROBE = ProbeRunSettings()  # and probe's


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


def judge_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options for commands that ask LLM judges (validate, judge-calibrate)."""
    for option in reversed(
        [
            click.option(
                "--judge",
                "judges",
                multiple=True,
                metavar="BACKEND[:MODEL][@URL]",
                help="LLM judge to rate every (original, output) pair, through any gen "
                "backend; repeatable. E.g. embedded, ollama:qwen2.5:7b, "
                "openai:gpt-4o-mini@http://127.0.0.1:8000/v1.",
            ),
            click.option(
                "--paraplue",
                "paraplue",
                multiple=True,
                metavar="BACKEND[:MODEL][@URL]",
                help="Also score every pair with a ParaPLUIE-style log-likelihood ratio, "
                "log p(Yes) - log p(No) for 'do A and B say the same thing?', from this "
                "model (embedded, openai, ollama or vllm); repeatable.",
            ),
            click.option(
                "--judge-scoring",
                type=option_type(JudgeSettings, "judge_scoring"),
                default=VAL.judge_scoring,
                show_default=True,
                help="reply: read the rating from the judge's reply; expected: weight the "
                "scale's whole numbers by the probability that the reply begins with each "
                "(no generation; embedded, openai, ollama or vllm).",
            ),
            click.option(
                "--judge-tokens",
                type=option_type(JudgeSettings, "judge_tokens"),
                default=VAL.judge_tokens,
                show_default=True,
                help="Longest judge reply, in tokens.",
            ),
            click.option(
                "--base-url",
                default=None,
                metavar="URL",
                help="Judge server address when the judge spec names none (defaults as for gen).",
            ),
            click.option(
                "--concurrency",
                type=option_type(JudgeSettings, "concurrency"),
                default=VAL.concurrency,
                show_default=True,
                help="Judge requests in flight at once (server backends).",
            ),
            click.option(
                "--batch-size",
                type=option_type(JudgeSettings, "batch_size"),
                default=VAL.batch_size,
                show_default=True,
                help="Prompts per forward pass (embedded judge) and texts per encoder batch.",
            ),
            click.option(
                "--engine",
                type=option_type(JudgeSettings, "engine"),
                default=VAL.engine,
                show_default=True,
                help="Engine of embedded judges and scorers: auto (llama.cpp for a GGUF "
                "model when llama-cpp-python is installed, else transformers), transformers "
                "or llama.cpp.",
            ),
            click.option(
                "--cache-dir",
                type=OutputFolder(),
                default=None,
                help="Where judge answers are cached. Default: $SHIFTBENCH_CACHE_DIR or "
                "~/.cache/shiftbench.",
            ),
            click.option("--no-cache", is_flag=True, help="Keep judge answers in memory only."),
        ]
    ):
        func = option(func)
    return func


def encoder_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The encoders to score and how they run (shared by evaluate and probe)."""
    options = [
        click.option(
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
        ),
        click.option(
            "--batch-size",
            type=option_type(EvalSettings, "batch_size"),
            default=EVAL.batch_size,
            show_default=True,
            help="Texts per encoder batch.",
        ),
        click.option(
            "--device", default=None, help="torch device (cpu, cuda, mps). Default: auto."
        ),
        click.option(
            "--precision",
            type=option_type(EvalSettings, "precision"),
            default=None,
            help="Dtype the encoder's weights are loaded in. Default: float32 (evaluate "
            "--protocol hteb: bfloat16, as HTEB's release loads every model).",
        ),
        click.option(
            "--trust-remote-code",
            is_flag=True,
            help="Run the code a model ships with it (models whose architecture is not in "
            "transformers).",
        ),
        click.option(
            "--model-kwarg",
            "model_kwargs",
            multiple=True,
            metavar="KEY=VALUE",
            help="Keyword argument for the model's transformers model (repeatable), e.g. "
            "attn_implementation=eager; VALUE is read as JSON when it can be.",
        ),
        click.option(
            "--encode-kwarg",
            "encode_kwargs",
            multiple=True,
            metavar="KEY=VALUE",
            help="Keyword argument for every encode call (repeatable), e.g. "
            "normalize_embeddings=true or truncate_dim=256; VALUE is read as JSON when it can be.",
        ),
        click.option(
            "--prompt",
            "prompts",
            multiple=True,
            metavar="NAME=TEXT",
            help="A prompt by name, added to the model's own (repeatable; a given name "
            "replaces the model's): a task name, a task type, query, document or TYPE-query, "
            "picked in mteb's order (task-role, task, type-role, type, role), e.g. "
            "--prompt 'query=query: ' --prompt 'document=passage: '.",
        ),
        click.option(
            "--cache-dir",
            type=OutputFolder(),
            default=None,
            help="Keep embeddings on disk here, keyed by model, revision, precision, model "
            "and encode arguments, and text, so later runs encode only texts never seen "
            "before.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def encoder_fields(
    trust_remote_code: bool,
    model_kwargs: tuple[str, ...],
    encode_kwargs: tuple[str, ...],
    prompts: tuple[str, ...],
) -> dict[str, Any]:
    """The encoder options as EncoderSettings fields (evaluate's and probe's)."""
    from shiftbench.core.settings import key_values
    from shiftbench.errors import InputError

    named: dict[str, str] = {}
    for pair in prompts:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise InputError(f"--prompt {pair!r} is not NAME=TEXT")
        named[name.strip()] = text
    return {
        "trust_remote_code": trust_remote_code,
        "model_kwargs": key_values(model_kwargs, "--model-kwarg"),
        "encode_kwargs": key_values(encode_kwargs, "--encode-kwarg"),
        "prompts": named,
    }


plots_option = click.option(
    "--plots/--no-plots",
    default=True,
    show_default=True,
    help="Write the PNG plots (bars, heatmap, scatter).",
)


def quiet_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """-q after the command's name; 'shiftbench -q COMMAND' means the same."""
    return click.option(
        "--quiet", "-q", is_flag=True, callback=_quiet_here_or_at_root, help="No progress bars."
    )(func)


def _quiet_here_or_at_root(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    return value or bool(ctx.find_root().params.get("quiet"))


# commands that generate: a row finished before an interrupt is in the generation cache
