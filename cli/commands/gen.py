"""gen and merge: rewrite a source into a run folder; join a sharded gen's folders."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from shiftbench.cli.commands.options import (
    CONTEXT,
    GEN,
    OutputFolder,
    option_type,
    quiet_option,
    source_options,
)
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.errors import InputError
from shiftbench.gen.api import GenSettings

# gen --help's sections: title -> its options' parameter names, in the order shown
GEN_SECTIONS = {
    "Source": (
        "task_type", "data_dir", "subsets", "splits", "source_language", "limit", "shard",
    ),
    "Generation": (
        "protocol", "transforms", "seeds", "rewrite", "languages", "prompt_variant",
        "prompt_file", "hteb_prompts", "control_pos", "wordnet_dir",
    ),
    "Sampling": ("temperature", "top_p", "top_k", "max_new_tokens", "max_attempts"),
    "Backend": (
        "backend", "model", "base_url", "timeout", "num_ctx", "concurrency", "engine_args",
        "batch_size", "engine",
    ),
    "Output": ("output", "overwrite", "cache_dir", "no_cache", "max_failure_rate"),
    "Plan": ("dry_run", "calibrate"),
}  # fmt: skip


@click.command(cls=SectionedCommand, sections=GEN_SECTIONS, context_settings=CONTEXT)
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
    type=option_type(GenSettings, "prompt_variant"),
    default=GEN.prompt_variant,
    show_default=True,
    help="Packaged prompt variant (paraphrase has 1-4), to measure prompt sensitivity.",
)
@click.option(
    "--output",
    "-o",
    type=OutputFolder(),
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
    type=option_type(GenSettings, "temperature"),
    default=GEN.temperature,
    help="Sampling temperature; 0 decodes greedily (default: the --protocol's; shiftbench: "
    "0.7, pteb: the backend's own, not sent; hteb: 1.0).",
)
@click.option(
    "--top-p",
    type=option_type(GenSettings, "top_p"),
    default=GEN.top_p,
    help="Nucleus sampling mass (default: the --protocol's; shiftbench: 0.95, pteb: the "
    "backend's own, not sent; hteb: 0.95).",
)
@click.option(
    "--top-k",
    type=option_type(GenSettings, "top_k"),
    default=GEN.top_k,
    help="Sample from the k likeliest tokens only; 0 sends none (default: the --protocol's; "
    "shiftbench, pteb: none sent; hteb: 64). Sent by every backend; an OpenAI-compatible "
    "server must accept top_k (vLLM's and llama.cpp's do).",
)
@click.option(
    "--max-new-tokens",
    type=option_type(GenSettings, "max_new_tokens"),
    default=None,
    help="The cap: most tokens one call may produce. Default: the transform's own cap "
    "(1024 for expansion and summarised-expansion, 512 for the rest). A value replaces it, "
    "lower or higher. Each call's first budget grows with its input, up to the cap; an "
    "output cut at its budget is asked for again with twice the budget, up to the cap, "
    "and is kept as truncated if still cut there. Under --protocol hteb every call gets a "
    "flat budget instead (512; 1024 for an expansion call), or this value when given.",
)
@click.option(
    "--max-attempts",
    type=option_type(GenSettings, "max_attempts"),
    default=GEN.max_attempts,
    help="Tries for a text whose output fails the automatic checks (empty, identical to "
    "the input except for back-translation, reasoning or prefix leak, runaway length) "
    "or is still cut at the token cap, when sampling (default: the --protocol's; "
    "shiftbench, pteb: 3; hteb: 4).",
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
    "--timeout",
    type=option_type(GenSettings, "timeout"),
    default=GEN.timeout,
    metavar="SECONDS",
    help="Seconds a request to the openai or ollama backend's server may wait for its "
    "answer, each try (10 to connect); a request that times out is retried, and a server "
    "that never answers ends the run with one line naming it, finished rows kept "
    "(default: $SHIFTBENCH_HTTP_TIMEOUT, else openai 300, ollama 600).",
)
@click.option(
    "--num-ctx",
    type=option_type(GenSettings, "num_ctx"),
    default=GEN.num_ctx,
    show_default=True,
    help="Context length: the ollama backend asks for it on every request, the vllm "
    "backend sizes its engine for it.",
)
@click.option(
    "--concurrency",
    type=option_type(GenSettings, "concurrency"),
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
    type=option_type(GenSettings, "batch_size"),
    default=GEN.batch_size,
    show_default=True,
    help="Prompts per forward pass (embedded backend, transformers engine); outputs do not "
    "depend on it.",
)
@click.option(
    "--engine",
    type=option_type(GenSettings, "engine"),
    default=GEN.engine,
    show_default=True,
    help="Engine of the embedded backend: auto (llama.cpp for a GGUF model when "
    "llama-cpp-python is installed, else transformers), transformers or llama.cpp. Their "
    "outputs differ; each is the same for the same seed.",
)
@click.option(
    "--limit",
    type=option_type(GenSettings, "limit"),
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
    "scores); any of those options given explicitly wins and is recorded as overridden. "
    "hteb without --hteb-prompts keeps shiftbench's own prompts and requests.",
)
@click.option(
    "--hteb-prompts",
    type=click.Path(path_type=Path),
    default=None,
    metavar="PATH",
    help="With --protocol hteb and --backend openai: your copy of HTEB's hteb/prompts.py "
    "(or a folder holding it); every request is then the one HTEB's generator sends: its "
    "instruction as the system turn and the text as the user turn, a JSON reply asked for "
    "and read, the seed plus the retry's number, HTEB's language draws, each text slot "
    "sent, repeats included.",
)
@click.option(
    "--cache-dir",
    type=OutputFolder(),
    default=None,
    help="Where finished rows are cached, and (in models/) the dequantised copy of a .gguf "
    "model. Default: $SHIFTBENCH_CACHE_DIR or ~/.cache/shiftbench.",
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
    type=option_type(GenSettings, "max_failure_rate"),
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
    "corpus, judgements and candidates itself), train (Classification's train split), "
    "references (Summarization's human summaries). Default: the protocol's parts for the "
    "task type (shiftbench: queries; pteb: queries and train; hteb: every part).",
)
@click.option("--overwrite", is_flag=True, help="Replace configs that already exist.")
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
    top_k: int | None,
    max_new_tokens: int | None,
    max_attempts: int | None,
    timeout: float | None,
    base_url: str | None,
    num_ctx: int,
    engine_args: tuple[str, ...],
    concurrency: int,
    batch_size: int,
    engine: str,
    limit: int | None,
    prompt_file: tuple[str, ...],
    protocol: str,
    hteb_prompts: Path | None,
    cache_dir: Path | None,
    no_cache: bool,
    shard: str | None,
    max_failure_rate: float,
    control_pos: str,
    wordnet_dir: str | None,
    rewrite: str | None,
    overwrite: bool,
    dry_run: bool,
    calibrate: bool,
    quiet: bool,
) -> None:
    """Write transformed variants of SOURCE into a run folder.

    SOURCE is an MTEB task name (e.g. STSBenchmark), a local folder in Hub layout (with
    --task-type), or "sample" for the small STS set that ships with shiftbench. The run
    folder gets a config "original" and one "<transform>-s<seed>" per transform and seed;
    load any of them with datasets.load_dataset(FOLDER, CONFIG).
    """
    from shiftbench.core.data.sources import load_source
    from shiftbench.gen.api import GenSettings, TooManyFailures, generate, plan_generation
    from shiftbench.gen.plan import format_plan
    from shiftbench.llm.backends.vllm_backend import parse_engine_args

    if engine_args and backend != "vllm":
        raise InputError("--engine-arg applies to the vllm backend only")
    if calibrate and not dry_run:
        raise InputError("--calibrate goes with --dry-run (every gen run measures itself)")
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
        top_k=top_k,
        max_new_tokens=max_new_tokens,
        max_attempts=max_attempts,
        timeout=timeout,
        base_url=base_url,
        num_ctx=num_ctx,
        engine_args=parse_engine_args(engine_args),
        concurrency=concurrency,
        batch_size=batch_size,
        engine=engine,
        limit=limit,
        output=output,
        cache_dir=cache_dir,
        no_cache=no_cache,
        shard=parse_shard(shard) if shard else None,
        max_failure_rate=max_failure_rate,
        control_pos=control_pos,
        wordnet_dir=wordnet_dir,
        hteb_prompts=hteb_prompts,
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
