"""gen's settings, each declared once: its type, default, bound or choices, help and --help
section live on its field, and `shiftbench gen`'s options, the spec's gen keys, `init`'s
starter spec and the spec reference are all built from them.

    >>> from shiftbench.gen.settings import GenSettings
    >>> GenSettings(languages="es,fr").languages
    ('es', 'fr')
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from shiftbench.core.protocols import PROTOCOLS
from shiftbench.core.settings import check, chosen, declared, ranged
from shiftbench.llm.backends.base import EMBEDDED_ENGINES

# the gen options a protocol preset fills in when they are left at None
PROTOCOL_OPTIONS = ("transforms", "seeds", "temperature", "top_p", "top_k", "max_attempts")

# the --help sections of gen's settings, in the order they are shown
GEN_SECTIONS = ("Source", "Generation", "Sampling", "Backend", "Output")


def _seed_text(seeds: tuple[int, ...]) -> str:
    """1337 or 1337-1339: a protocol's seeds as gen's help writes them."""
    consecutive = list(seeds) == list(range(seeds[0], seeds[0] + len(seeds)))
    if len(seeds) > 1 and consecutive:
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(str(x) for x in seeds)


# read from the presets, so that the spec's help says what leaving seeds out gives
PROTOCOL_SEEDS = "; ".join(f"{p.name}: {_seed_text(p.seeds)}" for p in PROTOCOLS.values())

# the Python API also takes a comma-separated string for these lists
_LISTS = ("languages", "rewrite")
# and these take comma-separated items too (the option's values, the spec's string)
_SPLIT = ("control_pos",)


@dataclass(frozen=True)
class GenSettings:
    """How gen rewrites a source; every field is the `shiftbench gen` option of its name,
    and its help is the option's (`shiftbench gen --help`). Lists are tuples; `languages`
    and `rewrite` also take a comma-separated string. `output`, None by default, is
    `default_run_folder(source name)` (the command's default is runs/<source name>);
    `quiet` turns progress bars off."""

    transforms: tuple[str, ...] | None = declared(
        None,
        section="Generation",
        flags=("--transform", "-t"),
        metavar="NAME[,NAME...]",
        spec="top",
        help="Transformations to apply, comma-separated or repeated; 'all' for all eight "
        "(default: the --protocol's; shiftbench and pteb: paraphrase, hteb: all). "
        "Controls: synonym-swap-1..3, antonym-swap, word-jumble-1..3 (rules, no LLM), "
        "negation and affirmative-paraphrase (LLM); 'controls' for all of them.",
        spec_help="Transformations to apply, e.g. [paraphrase, summarisation, translation]; "
        "[all] for all eight; [controls] for the controls (see 'shiftbench probe'). "
        "Omitted: the protocol's, as gen without --transform.",
    )
    seeds: tuple[int, ...] | None = declared(
        None,
        section="Generation",
        flags=("--seed", "--seeds", "-s"),
        metavar="N[,N...]",
        spec="top",
        help="Seeds, comma-separated or repeated; each gives its own variant of each "
        "transform (default: the --protocol's; shiftbench: 1337, pteb: 1337-1342, hteb: "
        "1337-1339).",
        spec_help="Seeds; each gives its own variant (config) of each transform. Omitted: "
        f"the protocol's, as gen without --seed ({PROTOCOL_SEEDS}).",
    )
    protocol: str = declared(
        "shiftbench",
        section="Generation",
        metavar="NAME",
        show_default=True,
        spec="top",
        help="Protocol preset: shiftbench, pteb or hteb. It sets the transforms, seeds, "
        "sampling and rewritten parts the paper uses (and records them, with how evaluate "
        "scores); any of those options given explicitly wins and is recorded as overridden. "
        "hteb without --hteb-prompts keeps shiftbench's own prompts and requests.",
    )
    languages: tuple[str, ...] = declared(
        ("es", "fr", "de", "tr", "ar"),
        section="Generation",
        metavar="CODES",
        show_default=True,
        spec="top",
        help="Target-language pool (ISO 639-1 codes, comma-separated or repeated) for "
        "translation, cross-translation and "
        "back-translation pivots (which add English); the source language is never drawn.",
        spec_help="Target-language pool of the translation transforms, e.g. [es, fr, de].",
    )
    prompt_variant: int = ranged(
        1,
        low=1,
        section="Generation",
        show_default=True,
        spec="top",
        help="Packaged prompt variant (paraphrase has 1-4), to measure prompt sensitivity.",
    )
    prompt_files: tuple[str, ...] = declared(
        (),
        section="Generation",
        key="prompt_file",
        flags=("--prompt-file",),
        metavar="[TRANSFORM[:STEP]=]FILE",
        spec="top",
        path=True,
        single=True,
        separator="",
        help="Prompt template to use instead of a transform's own ({text} marks the input, "
        "{language} the language to write in); repeatable. FILE alone: every single-call "
        "transform; TRANSFORM=FILE: that single-call transform; TRANSFORM:STEP=FILE: one step "
        "(from 1) of any transform, e.g. backtranslation:2=FILE.",
        spec_help="Prompt templates instead of the transforms' own, each FILE, TRANSFORM=FILE "
        "or TRANSFORM:STEP=FILE as for gen --prompt-file (e.g. backtranslation:2=back.txt); "
        "one string or a list. {text} marks the input, {language} the language to write in.",
    )
    rewrite: tuple[str, ...] | None = declared(
        None,
        section="Generation",
        metavar="PART[,PART...]",
        spec="top",
        help="What to rewrite, comma-separated or repeated: queries (the scored texts: ranking "
        "queries, or the evaluation "
        "split), corpus (Retrieval and Reranking documents; the run folder then holds the "
        "corpus, judgements and candidates itself), train (Classification's train split), "
        "references (Summarization's human summaries). Default: the protocol's parts for the "
        "task type (shiftbench: queries; pteb: queries and train; hteb: every part).",
        spec_help="Parts rewritten: queries (the scored texts), corpus (ranking documents, "
        "reranking candidates), train (the classification train split), e.g. [queries, "
        "corpus]. Omitted: the protocol's parts for each task type.",
    )
    backend: str = declared(
        "embedded",
        section="Backend",
        flags=("--backend", "-b"),
        show_default=True,
        help="Generation backend: embedded, ollama, openai or vllm.",
    )
    model: str | None = declared(
        None,
        section="Backend",
        flags=("--model", "-m"),
        help="Generator model: Hub id, local folder or .gguf file. Default: the "
        "backend's default (embedded, vllm: HuggingFaceTB/SmolLM2-135M-Instruct).",
    )
    temperature: float | None = ranged(
        None,
        float,
        low=0,
        section="Sampling",
        help="Sampling temperature; 0 decodes greedily (default: the --protocol's; "
        "shiftbench: 0.7, pteb: the backend's own, not sent; hteb: 1.0).",
    )
    top_p: float | None = ranged(
        None,
        float,
        low=0,
        high=1,
        low_open=True,
        section="Sampling",
        help="Nucleus sampling mass (default: the --protocol's; shiftbench: 0.95, pteb: the "
        "backend's own, not sent; hteb: 0.95).",
    )
    max_new_tokens: int | None = ranged(
        None,
        low=1,
        section="Sampling",
        help="The cap: most tokens one call may produce. Default: the transform's own cap "
        "(1024 for expansion and summarised-expansion, 512 for the rest). A value replaces "
        "it, lower or higher. Each call's first budget grows with its input, up to the cap; "
        "an output cut at its budget is asked for again with twice the budget, up to the "
        "cap, and is kept as truncated if still cut there. Under --protocol hteb every call "
        "gets a flat budget instead (512; 1024 for an expansion call), or this value when "
        "given.",
    )
    top_k: int | None = ranged(
        None,
        low=0,
        section="Sampling",
        help="Sample from the k likeliest tokens only; 0 sends none (default: the "
        "--protocol's; shiftbench, pteb: none sent; hteb: 64). Sent by every backend; an "
        "OpenAI-compatible server must accept top_k (vLLM's and llama.cpp's do).",
    )
    max_attempts: int | None = ranged(
        None,
        low=1,
        section="Sampling",
        help="Tries for a text whose output fails the automatic checks (empty, identical to "
        "the input except for back-translation, reasoning or prefix leak, runaway length) "
        "or is still cut at the token cap, when sampling (default: the --protocol's; "
        "shiftbench, pteb: 3; hteb: 4).",
    )
    base_url: str | None = declared(
        None,
        section="Backend",
        metavar="URL",
        help="Server address: openai backend default $OPENAI_BASE_URL or "
        "http://127.0.0.1:8000/v1 (API key from $OPENAI_API_KEY); ollama backend default "
        "$OLLAMA_HOST or http://127.0.0.1:11434.",
    )
    timeout: float | None = ranged(
        None,
        float,
        low=0,
        low_open=True,
        section="Backend",
        metavar="SECONDS",
        help="Seconds a request to the openai or ollama backend's server may wait for its "
        "answer, each try (10 to connect); a request that times out is retried, and a server "
        "that never answers ends the run with one line naming it, finished rows kept "
        "(default: $SHIFTBENCH_HTTP_TIMEOUT, else openai 300, ollama 600).",
    )
    num_ctx: int = ranged(
        8192,
        low=256,
        section="Backend",
        show_default=True,
        help="Context length: the ollama backend asks for it on every request, the vllm "
        "backend sizes its engine for it.",
    )
    engine_args: dict[str, object] = declared(
        factory=dict,
        section="Backend",
        flags=("--engine-arg",),
        metavar="KEY=VALUE",
        help="Keyword argument for vllm.LLM (vllm backend; repeatable), e.g. "
        "tensor_parallel_size=2 or enforce_eager=true; VALUE is read as JSON when it can be.",
        spec_help="vllm.LLM arguments (vllm backend only), e.g. {tensor_parallel_size: 2}.",
    )
    concurrency: int = ranged(
        4,
        low=1,
        section="Backend",
        show_default=True,
        help="Requests in flight at once (server backends).",
    )
    batch_size: int = ranged(
        8,
        low=1,
        section="Backend",
        show_default=True,
        help="Prompts per forward pass (embedded backend, transformers engine); outputs do "
        "not depend on it.",
    )
    engine: str = chosen(
        "auto",
        *EMBEDDED_ENGINES,
        section="Backend",
        show_default=True,
        help="Engine of the embedded backend: auto (llama.cpp for a GGUF model when "
        "llama-cpp-python is installed, else transformers), transformers or llama.cpp. Their "
        "outputs differ; each is the same for the same seed.",
    )
    limit: int | None = ranged(
        None,
        low=1,
        section="Source",
        spec="sources",
        help="Use only the first N rows of each split; in Classification and Clustering, N "
        "rows taken a label at a time in turn, so a small run keeps many classes.",
    )
    output: Path | None = None  # the command's -o, declared there
    cache_dir: Path | None = declared(
        None,
        section="Output",
        spec="top",
        path=True,
        written=True,
        help="Where finished rows are cached, and (in models/) the dequantised copy of a "
        ".gguf model. Default: $SHIFTBENCH_CACHE_DIR or ~/.cache/shiftbench.",
    )
    no_cache: bool = declared(
        False, section="Output", spec=None, help="Keep finished rows in memory only."
    )
    shard: tuple[int, int] | None = declared(
        None,
        section="Source",
        metavar="I/N",
        spec=None,
        help="Make only rows whose row_id % N == I (I from 0), for splitting a run across "
        "machines; put the shards together with 'shiftbench merge'.",
    )
    max_failure_rate: float = ranged(
        0.5,
        float,
        low=0,
        high=1,
        section="Output",
        show_default=True,
        help="Exit with 1 when a larger share of the rows written failed the checks (the run "
        "folder is written all the same).",
    )
    control_pos: tuple[str, ...] = declared(
        ("verb", "adjective"),
        section="Generation",
        metavar="POS[,POS...]",
        show_default=True,
        spec="top",
        single=True,
        # split by the settings (below), so that an empty value stays an error
        separator="",
        help="Parts of speech the synonym and antonym swaps may change, comma-separated or "
        "repeated: verb, adjective, adverb, noun.",
        spec_help="Parts of speech the synonym and antonym swaps may change, e.g. [verb, "
        "adjective] (or one string, verb,adjective): verb, adjective, adverb, noun.",
    )
    wordnet_dir: str | None = declared(
        None,
        section="Generation",
        metavar="DIR",
        spec="top",
        path=True,
        help="WordNet 3.0 dict folder for the synonym and antonym swaps (e.g. Debian's "
        "/usr/share/wordnet). Default: $SHIFTBENCH_WORDNET_DIR, NLTK's data, "
        "/usr/share/wordnet.",
    )
    hteb_prompts: Path | None = declared(
        None,
        section="Generation",
        metavar="PATH",
        spec="top",
        path=True,
        help="With --protocol hteb and --backend openai: your copy of HTEB's hteb/prompts.py "
        "(or a folder holding it); every request is then the one HTEB's generator sends: its "
        "instruction as the system turn and the text as the user turn, a JSON reply asked for "
        "and read, the seed plus the retry's number, HTEB's language draws, each text slot "
        "sent, repeats included.",
    )
    overwrite: bool = declared(
        False, section="Output", spec=None, help="Replace configs that already exist."
    )
    quiet: bool = False  # the command's -q, declared there

    def __post_init__(self) -> None:
        for f in fields(self):  # a str, as callers write one
            value = getattr(self, f.name)
            if isinstance(value, str) and "Path" in str(f.type):
                object.__setattr__(self, f.name, Path(value))
            elif isinstance(value, str) and f.name in _LISTS:
                parts = tuple(p.strip() for p in value.split(",") if p.strip())
                object.__setattr__(self, f.name, parts)
            elif isinstance(value, list):
                object.__setattr__(self, f.name, tuple(value))
            if f.name in _SPLIT:
                items = (value,) if isinstance(value, str) else value
                parts = tuple(p.strip() for v in items for p in v.split(",") if p.strip())
                object.__setattr__(self, f.name, parts)
        check(self)


def defaults() -> dict[str, Any]:
    """Each setting's default, as the CLI shows it."""
    out = {}
    for f in fields(GenSettings):
        out[f.name] = f.default_factory() if callable(f.default_factory) else f.default
    return out
