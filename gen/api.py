"""gen as a library: settings in, a run folder out.

`generate(source, GenSettings(...))` does what `shiftbench gen` does, and the command, the
spec runner and the Ray runner all call it. The settings' defaults are the command's: the
CLI reads them from `GenSettings` itself.

    >>> from shiftbench import GenSettings, generate
    >>> result = generate("sample", GenSettings(transforms=("paraphrase",), seeds=(1, 2)))
    >>> result.configs
    ('original', 'paraphrase-s1', 'paraphrase-s2')
    >>> generate("sample", GenSettings(transforms=("paraphrase",), seeds=(1, 2))).kept
    ('original', 'paraphrase-s1', 'paraphrase-s2')

From Python, the run folder goes under the user's cache unless `output` names one
(`default_run_folder`); the command's default is runs/<source> in the current folder.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Callable, MutableMapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shiftbench.core.data.parts import check_rewrite, with_parts
from shiftbench.core.data.runfolder import ConfigData, config_name
from shiftbench.core.data.writes import writing
from shiftbench.core.messages import counted, option, report
from shiftbench.core.progress import quieted, step
from shiftbench.core.protocols import Applied, apply_protocol, get_protocol
from shiftbench.core.text.languages import parse_pool
from shiftbench.core.text.transforms import (
    Prompt,
    Transform,
    expand_transforms,
    load_prompts,
    parse_prompt_files,
)
from shiftbench.errors import InputError, RuntimeFault, ShiftbenchError
from shiftbench.gen.controls import (
    ANTONYM,
    JUMBLE,
    SYNONYM,
    RuleVariant,
    load_lexicon,
    parse_parts_of_speech,
)
from shiftbench.gen.estimate import (
    CALIBRATION,
    GEN_RUN,
    Estimate,
    Metered,
    load_average,
    measured,
    now,
    read_throughput,
    record_throughput,
)
from shiftbench.gen.generate import check_gen, failure_share, generate_run_folder
from shiftbench.gen.plan import plan_gen
from shiftbench.gen.rewrite import Variant
from shiftbench.gen.settings import PROTOCOL_OPTIONS, GenSettings
from shiftbench.llm.backends import Sampling, backend_target, get_backend
from shiftbench.llm.backends.weights import conversion_seconds
from shiftbench.llm.cache import GenerationCache, default_cache_dir

if TYPE_CHECKING:
    from shiftbench.core.data.sources import Source
    from shiftbench.gen.plan import GenPlan
    from shiftbench.llm.backends import Backend

log = logging.getLogger(__name__)


def default_run_folder(name: str) -> Path:
    """Where `generate` writes a source's run folder when `output` is None: under the
    user's cache ($SHIFTBENCH_CACHE_DIR, else ~/.cache/shiftbench), never into the current
    folder: `<cache>/runs/<source name>`."""
    return default_cache_dir() / "runs" / name


@dataclass(frozen=True)
class GenResult:
    """What a gen run wrote.

    Attributes:
        folder: The run folder.
        configs: The configs written by this run, in order (empty: all were complete).
        failed_rows: Rewritten rows that failed the checks (a kept identical
            back-translation and a control's not-applicable rows are no failures).
        checked_rows: Rewritten rows the checks saw.
        kept: The configs asked for that the folder held already, complete and made with
            the same settings, and that were left as they are (all of them: nothing to do).
    """

    folder: Path
    configs: tuple[str, ...]
    failed_rows: int
    checked_rows: int
    kept: tuple[str, ...] = ()

    @property
    def failure_rate(self) -> float:
        return self.failed_rows / self.checked_rows if self.checked_rows else 0.0

    def summary(self) -> str:
        """The line `shiftbench gen` prints about the run."""
        if not self.configs:
            return f"nothing to do: every config asked for is already complete in {self.folder}"
        return f"wrote {', '.join(self.configs)} to {self.folder}"


class TooManyFailures(RuntimeFault):
    """More rows failed the checks than `max_failure_rate` allows; the run folder is
    written all the same, and `result` says what is in it."""

    def __init__(self, message: str, result: GenResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class _Prepared:
    variants: list[Any]
    parts: tuple[str, ...]
    record: dict[str, Any]
    backend_settings: dict[str, Any]
    target: Path
    cache_dir: Path | None


def _prepare(source: Source, settings: GenSettings) -> _Prepared:
    """Every check that needs no model, and the variants to make."""

    s = settings
    _check_backend(s)
    pool = parse_pool(s.languages)
    applied = _applied(s)
    chosen, sampling, prompts_of = _prompting(s, applied)
    # a rewrite given overrides the protocol's parts for this task type
    asked = applied.protocol.rewrite_for(source.task_type) if s.rewrite is None else s.rewrite
    parts = check_rewrite(source.task_type, asked)
    record = applied.record(source.task_type)
    record["rewrite"] = list(parts)
    if s.rewrite is not None:
        record["overridden"].append("rewrite")
    parts_of_speech = parse_parts_of_speech(s.control_pos)
    lexicon = None
    if s.wordnet_dir is not None or any(t.rule in (SYNONYM, ANTONYM) for t in chosen):
        lexicon = load_lexicon(s.wordnet_dir, parts_of_speech)
    variants: list[Variant | RuleVariant] = [
        RuleVariant(t, seed, lexicon if t.rule != JUMBLE else None)
        if t.rule
        else Variant(
            t,
            prompts_of(t),
            seed,
            sampling,
            pool,
            s.prompt_variant,
            applied.max_attempts,
        )
        for t in chosen
        for seed in applied.seeds
    ]
    return _Prepared(
        variants,
        parts,
        record,
        _backend_settings(s),
        _target(source, s),
        None if s.no_cache else (s.cache_dir or default_cache_dir()),
    )


def _check_backend(s: GenSettings) -> None:
    """Refuses the options the chosen backend cannot take, before any work."""
    backend_target(s.backend)  # an unknown backend is refused even when no call is made
    if s.engine_args and s.backend != "vllm":
        raise InputError(
            f"{option('engine_args', '--engine-arg')} applies to the vllm backend only"
        )
    if s.engine != "auto" and s.backend != "embedded":
        raise InputError(f"{option('engine')} applies to the embedded backend only")
    if s.backend == "embedded":  # llama.cpp asked for where it cannot run: before any work
        from shiftbench.llm.backends.embedded import choose_engine
        from shiftbench.llm.backends.weights import DEFAULT_MODEL, locate_model

        choose_engine(s.engine, locate_model(s.model or DEFAULT_MODEL))
    served = s.backend in ("ollama", "vllm")
    if served and s.max_new_tokens is not None and s.max_new_tokens >= s.num_ctx:
        raise InputError(
            f"{option('max_new_tokens')} {s.max_new_tokens} leaves no room for the prompt in "
            f"the {s.backend} backend's context of {s.num_ctx} tokens; raise "
            f"{option('num_ctx')}"
        )


def _applied(s: GenSettings) -> Applied:
    """The protocol asked for, with the options given over its values."""
    given = {k: getattr(s, k) for k in PROTOCOL_OPTIONS if getattr(s, k) is not None}
    if "transforms" in given:
        given["transforms"] = tuple(t.name for t in expand_transforms(given["transforms"]))
    if "seeds" in given:
        given["seeds"] = tuple(dict.fromkeys(int(x) for x in given["seeds"]))
    return apply_protocol(get_protocol(s.protocol), given)


def _prompting(
    s: GenSettings, applied: Applied
) -> tuple[list[Transform], Sampling, Callable[[Transform], tuple[Prompt, ...]]]:
    """The transforms chosen, the sampling, and each transform's prompts: HTEB's requests
    when the user gives them (with HTEB's sampling), else the packaged prompts or the
    user's prompt files."""
    sampling = Sampling(
        applied.temperature,
        applied.top_p,
        s.max_new_tokens,
        applied.top_k,
        applied.protocol.token_budgets,
    )
    chosen = expand_transforms(applied.transforms)
    prompt_files = parse_prompt_files(s.prompt_files, chosen)
    if s.hteb_prompts is not None:  # loaded only here: HTEB's requests are a run's choice
        from shiftbench.gen.hteb_requests import HtebSampling, stage_prompts

        hteb = _hteb_prompts(s, chosen)
        return chosen, HtebSampling(**asdict(sampling)), lambda t: stage_prompts(t, *hteb)
    return chosen, sampling, lambda t: load_prompts(t, prompt_files, s.prompt_variant)


def _backend_settings(s: GenSettings) -> dict[str, Any]:
    """What get_backend takes of the settings, beside the backend and model."""
    return dict(
        batch_size=s.batch_size,
        engine=s.engine,
        base_url=s.base_url,
        concurrency=s.concurrency,
        **({"timeout": s.timeout} if s.timeout is not None else {}),
        num_ctx=s.num_ctx,
        engine_args=dict(s.engine_args),
        cache_dir=s.cache_dir,
    )


def _target(source: Source, s: GenSettings) -> Path:
    """The run folder to write: the one asked for, or a new one; refused inside the
    source's own folder."""
    target = s.output or default_run_folder(source.name)
    local = source.data_dir or (
        Path(source.dataset_path) if Path(source.dataset_path).is_dir() else None
    )
    if local is not None and target.resolve().is_relative_to(Path(local).resolve()):
        raise InputError(
            f"output {target} is inside the source folder {local}; a run folder there would "
            f"become part of the source (and change its fingerprint): choose an "
            f"{option('output')} outside it"
        )
    return target


def _hteb_prompts(s: GenSettings, chosen: list[Any]) -> tuple[Path, dict[str, str]]:
    """The user's HTEB prompts, checked with what they go with."""
    from shiftbench.core.data.hteb import HTEB_NAMES
    from shiftbench.gen.hteb_requests import BACKENDS as HTEB_BACKENDS
    from shiftbench.gen.hteb_requests import read_prompts

    assert s.hteb_prompts is not None
    given = option("hteb_prompts")
    if s.protocol != "hteb":
        raise InputError(f"{given} goes with {option('protocol')} hteb, not {s.protocol}")
    if s.backend not in HTEB_BACKENDS:
        raise InputError(
            f"{given} sends HTEB's chat turns and JSON output request, which the "
            f"{s.backend} backend does not send; use {option('backend')} "
            f"{' or '.join(HTEB_BACKENDS)} (vLLM's server among others)"
        )
    if s.prompt_files:
        flag = option("prompt_files", "--prompt-file")
        raise InputError(f"{flag} and {given} both give the prompts; give one")
    if s.prompt_variant != 1:
        raise InputError(f"{option('prompt_variant')} chooses among shiftbench's prompts, "
                         f"not {given}'s")  # fmt: skip
    if s.shard is not None:  # HTEB numbers the whole dataset's texts for its draws
        raise InputError(
            f"{option('shard')} would number each shard's texts apart, where HTEB numbers "
            f"the dataset's for its language draws; run {given} unsharded"
        )
    foreign = [t.name for t in chosen if t.rule is None and t.name not in HTEB_NAMES]
    if foreign:
        raise InputError(
            f"HTEB has no transformation {foreign[0]}; {given} makes HTEB's eight: "
            f"{', '.join(HTEB_NAMES)}"
        )
    return read_prompts(s.hteb_prompts)


def _source(source: Source | str | Path) -> Source:
    """A Source as given, or the one `load_source` reads from a name or path."""
    from shiftbench.core.data.sources import Source, load_source

    return source if isinstance(source, Source) else load_source(str(source))


def _needs_generator(variants: list[Any]) -> bool:

    return not all(isinstance(v, RuleVariant) for v in variants)


CALIBRATION_ROWS = 8  # rows per split a calibration rewrites (two batches of 8 texts for STS)


def plan_generation(
    source: Source | str | Path, settings: GenSettings | None = None, *, calibrate: bool = False
) -> GenPlan:
    """What `generate` would do, checked as it checks, with no model loaded and nothing
    written: per config the unique texts, the calls of their first attempt, and how many
    the cache answers or another config shares, then the tokens and time they take
    (`GenPlan.estimate`, from the throughput the latest gen run of this backend and model
    measured on this machine). `source` is taken as `generate` takes it.

    With `calibrate`, and no measurement yet, a few real calls measure one first (the
    model is loaded; the rows are kept in the cache, so the plan counts them as cached).
    A calibration that fails leaves the estimate without a time, saying why."""

    settings = settings or GenSettings()
    given = _source(source)
    ready = _prepare(given, settings)
    resolved = with_parts(given, ready.parts)  # a part may add text fields (references)
    engine = None
    note = None
    record = None
    if _needs_generator(ready.variants):
        engine = get_backend(settings.backend, settings.model, **ready.backend_settings)
        record = read_throughput(_measured_as(settings, engine), settings.model, settings.cache_dir)
        if record is None and calibrate:
            try:
                calibrate_generation(given, settings)
            except ShiftbenchError as exc:
                note = str(exc)
            record = read_throughput(
                _measured_as(settings, engine), settings.model, settings.cache_dir
            )
            if record is None and note is None:
                note = "it measured nothing: no cache to keep its record in (no_cache)"
    cache = GenerationCache.read_only(ready.cache_dir)
    try:
        plan = plan_gen(
            resolved, ready.variants, engine, ready.target, cache=cache, limit=settings.limit,
            shard=settings.shard, overwrite=settings.overwrite, rewrite=ready.parts,
        )  # fmt: skip
    finally:
        cache.close()
    if engine is None or not plan.configs:
        return plan
    estimate = Estimate(
        settings.backend, settings.model, plan.to_make, plan.tokens, record, load_average(), note
    )
    return replace(plan, estimate=estimate)


def _measured_as(settings: GenSettings, engine: Any) -> str:
    """The backend's name in the throughput record: the embedded backend's llama.cpp
    engine apart from its transformers engine (about 3x the speed; transformers' records
    keep the plain name they had before there were two)."""
    if getattr(engine, "engine", None) == "llama.cpp":
        return f"{settings.backend} llama.cpp"
    return settings.backend


def calibrate_generation(source: Source | str | Path, settings: GenSettings) -> None:
    """Measure the generator's throughput on this machine with a few real calls: the
    first rows (CALIBRATION_ROWS per split) of the first LLM transform and seed, each text
    tried once (a few texts' retries, with their growing budgets, would swamp so small a
    measure), written to a temporary folder and removed. The rows stay in the generation
    cache (a later run reuses them) and the measurement in the throughput record
    (gen/estimate.py).

    Raises:
        InputError: Bad input.
        RuntimeFault: The generator failed.
    """
    given = _source(source)
    first = next(v for v in _prepare(given, settings).variants if isinstance(v, Variant))
    limit = min(settings.limit or CALIBRATION_ROWS, CALIBRATION_ROWS)
    small = replace(
        settings, transforms=(first.transform.name,), seeds=(first.seed,), limit=limit,
        shard=None, overwrite=True, max_failure_rate=1.0, max_attempts=1,
    )  # fmt: skip
    # the model's conversion and load and the calls' count show on stderr as a gen run's
    # do: a first calibration on a new machine takes about a minute
    step(
        f"calibrating: {first.base_name} on the first {counted(limit, 'row')} of each split, each "
        "text tried once, to measure this machine's throughput ...",
        quiet=settings.quiet,
    )
    with tempfile.TemporaryDirectory(prefix="shiftbench-calibration-") as folder:
        _generate(given, replace(small, output=Path(folder) / "run"), None, CALIBRATION)


def generate(
    source: Source | str | Path,
    settings: GenSettings | None = None,
    *,
    engines: MutableMapping[str, Backend] | None = None,
) -> GenResult:
    """Write the transformed variants of `source` into a run folder.

    Everything that can be checked is checked before the first model call, so bad input
    (an InputError) writes nothing. Finished rows are cached as they come, so a run that
    fails or is interrupted resumes where it stopped.

    The run folder is `settings.output`, or `default_run_folder(source name)` under the
    user's cache ($SHIFTBENCH_CACHE_DIR, else ~/.cache/shiftbench) when that is None;
    nothing is written into the current folder unless `output` says so. A config the
    folder holds already (same settings) is kept as it is: the result names it in `kept`,
    and a call that finds every config there logs one REPORT line saying so.

    Args:
        source: What to rewrite: a Source from `load_source`, or a name or path that
            `load_source` reads as it is (an MTEB task name, "sample"; a local folder
            needs its task type: `load_source(folder, task_type=...)`).
        settings: How; `GenSettings()` for the defaults.
        engines: Loaded generators to reuse, keyed by their settings; a caller running
            several sources with one generator passes the same mapping each time.

    Returns:
        The run folder and what was written to it.

    Raises:
        InputError: Bad input; nothing written.
        TooManyFailures: More rows failed the checks than `max_failure_rate`; written.
        RuntimeFault: The generator failed for good; finished rows are cached.
    """

    return _generate(_source(source), settings or GenSettings(), engines, GEN_RUN)


def _generate(
    given: Source,
    settings: GenSettings,
    engines: MutableMapping[str, Backend] | None,
    kind: str,
) -> GenResult:
    ready = _prepare(given, settings)
    resolved = with_parts(given, ready.parts)  # a part may add text fields (references)
    key = json.dumps(
        [settings.backend, settings.model, {k: str(v) for k, v in ready.backend_settings.items()}]
    )
    engine = engines.get(key) if engines is not None else None
    log.info(
        "gen %s: %d variant(s) (%s), rewriting %s, into %s",
        resolved.name, len(ready.variants), ", ".join(v.base_name for v in ready.variants),
        ", ".join(ready.parts) or "the evaluated texts", ready.target,
    )  # fmt: skip
    # One writer per run folder, from its checks to its last write (writes.writing).
    with writing(ready.target):
        return _generate_held(resolved, settings, ready, engine, engines, key, kind)


def _generate_held(
    source: Source,
    settings: GenSettings,
    ready: _Prepared,
    engine: Any,
    engines: MutableMapping[str, Backend] | None,
    key: str,
    kind: str,
) -> GenResult:
    background = load_average()  # before this run's own work adds to it
    # The source, the output folder and the languages are checked before a model loads.
    checked = check_gen(
        source, ready.variants, ready.target, limit=settings.limit, shard=settings.shard,
        rewrite=ready.parts, protocol=ready.record,
    )  # fmt: skip
    # The cache folder before the model, which may be kept in it. Rule-based controls are
    # made again in no time and never cached: they need no cache folder (one that cannot
    # be written, a read-only HOME, is no matter to them).
    cache = GenerationCache(ready.cache_dir if _needs_generator(ready.variants) else None)
    try:
        engine, load_seconds = _loaded(settings, ready, engine, engines, key)
        # What the run measures is kept for dry runs (gen/estimate.py), with the cache.
        metered = Metered(engine) if engine is not None and ready.cache_dir else None
        planned = None
        if metered is not None:
            planned = plan_gen(
                source, ready.variants, engine, ready.target, cache=cache,
                limit=settings.limit, shard=settings.shard, overwrite=settings.overwrite,
                rewrite=ready.parts, described=engine.describe(), checked=checked,
            )  # fmt: skip
        began = now()
        written = generate_run_folder(
            source,
            ready.variants,
            metered or engine,
            ready.target,
            cache=cache,
            limit=settings.limit,
            shard=settings.shard,
            overwrite=settings.overwrite,
            quiet=settings.quiet,
            rewrite=ready.parts,
            protocol=ready.record,
            checked=checked,
        )
        if metered is not None and planned is not None and metered.calls:
            record_throughput(
                measured(
                    metered, backend=_measured_as(settings, engine), model=settings.model,
                    kind=kind,
                    load_average=background, planned_calls=planned.to_make,
                    planned_tokens=planned.tokens, seconds=now() - began,
                    load_seconds=load_seconds,
                ),
                ready.cache_dir,
            )  # fmt: skip
    finally:
        cache.close()
    return _result(source, settings, ready, written)


def _loaded(
    settings: GenSettings,
    ready: _Prepared,
    engine: Any,
    engines: MutableMapping[str, Backend] | None,
    key: str,
) -> tuple[Any, float]:
    """The generator, loaded unless one was given (kept in `engines` under `key` for the
    next call) or none is needed, and the seconds its load took."""
    loading, converting = now(), conversion_seconds()
    if engine is None and _needs_generator(ready.variants):  # rule-based controls need none
        engine = get_backend(settings.backend, settings.model, **ready.backend_settings)
        log.info("loading the %s generator %s", settings.backend, settings.model or "(default)")
        with quieted(settings.quiet):  # the model's load and conversion name themselves
            engine.load()
        if engines is not None:
            engines[key] = engine
    # a first use's one-time conversion is no part of what a later load takes
    return engine, now() - loading - (conversion_seconds() - converting)


def _result(
    source: Source, settings: GenSettings, ready: _Prepared, written: list[ConfigData]
) -> GenResult:
    """What the run wrote and kept, and how many rows failed the checks; raises
    TooManyFailures when more failed than `max_failure_rate` allows."""
    failed, total = failure_share(written)
    if total:
        log.info("gen %s: %d of %d checked rows failed the checks", source.name, failed, total)
    made = tuple(c.name for c in written)
    asked = [
        config_name(name, subset, source.multi_subset)
        for subset in source.subsets
        for name in ("original", *(v.base_name for v in ready.variants))
    ]
    kept = tuple(name for name in dict.fromkeys(asked) if name not in made)
    result = GenResult(ready.target, made, failed, total, kept)
    if not made:
        # a second identical call: say so (the command prints this line from the log)
        report(log, result.summary())
    if total and failed / total > settings.max_failure_rate:
        raise TooManyFailures(
            f"{failed} of {total} rows ({failed / total:.0%}) failed the checks, more than "
            f"{option('max_failure_rate')} {settings.max_failure_rate:g}; they are in "
            f"{ready.target} with their reasons",
            result,
        )
    return result
