"""gen --dry-run: what a gen command would ask its backend, with nothing loaded or written.

Per config it counts the unique texts, the calls of their first attempt (one per text and
step; retries of failed outputs and larger budgets for cut ones come on top), how many
of those the cache answers already, and how many another config of the same run makes
(greedy decoding shares calls across seeds; a text's second step is shared when its first
step is). A step whose earlier step's cached output is empty is never made, and counts as
cached. A call's identity follows the cache key (gen/rewrite.py call_key), so these
figures are the calls gen makes when every first attempt succeeds. Each call to make
also gets the output tokens expected of it (gen/estimate.py), and plan_generation adds the
time they take, going by a throughput measured on this machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.core.data.parts import DEFAULT
from shiftbench.core.data.runfolder import config_name
from shiftbench.core.data.sources import Source
from shiftbench.core.text.languages import Language
from shiftbench.gen.controls import RuleVariant
from shiftbench.gen.estimate import Estimate, call_tokens
from shiftbench.gen.generate import Prepared, field_groups, prepare_gen, texts_to_rewrite
from shiftbench.gen.rewrite import BUDGET_GROWTH, LENGTH, Variant, call_key, texts_to_send
from shiftbench.llm.backends import Backend, Generation
from shiftbench.llm.cache import GenerationCache, row_key


@dataclass(frozen=True)
class ConfigPlan:
    """One config's share of the calls."""

    name: str
    texts: int  # unique texts sent to the backend
    calls: int  # first-attempt calls, at most (one per text and step)
    cached: int | None  # answered by the cache; None when the model is not known unloaded
    shared: int  # made by an earlier config of the run (not cached)
    tokens: int = 0  # output tokens expected of the calls to make (gen/estimate.py)

    @property
    def to_make(self) -> int:
        return self.calls - (self.cached or 0) - self.shared


@dataclass(frozen=True)
class GenPlan:
    """Every config a gen command would write, and the calls it would make."""

    output: Path
    configs: tuple[ConfigPlan, ...]
    model_known: bool  # False: cache hits and existing configs were not checked
    estimate: Estimate | None = None  # the calls' tokens and time (plan_generation)

    @property
    def calls(self) -> int:
        return sum(c.calls for c in self.configs)

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.configs)

    @property
    def to_make(self) -> int:
        return sum(c.to_make for c in self.configs)


def plan_gen(
    source: Source,
    variants: list[Variant | RuleVariant],
    backend: Backend | None,
    output: Path,
    *,
    cache: GenerationCache,
    limit: int | None = None,
    shard: tuple[int, int] | None = None,
    overwrite: bool = False,
    rewrite: tuple[str, ...] = DEFAULT,
    described: Mapping[str, Any] | None = None,
    checked: Prepared | None = None,
) -> GenPlan:
    """The plan of generate_run_folder with the same arguments; bad input raises the same
    InputError.

    No weights are loaded: a backend that holds them in this process describes its model
    unloaded (`describe_unloaded`); a server backend is checked as gen checks it (load).
    A caller that holds the description (`described`, a loaded backend's) and check_gen's
    result (`checked`) passes them, and the backend is not asked again.
    """
    if described is None:
        described = _described(backend)
    known = described is not None
    ready = prepare_gen(
        source, variants, described or {"model": None}, output, limit=limit, shard=shard,
        overwrite=overwrite or not known, rewrite=rewrite, checked=checked,
    )  # fmt: skip
    model = described["model"] if described else None
    seen: set[str] = set()
    configs = []
    for subset, splits in ready.data.items():
        rewritten, texts = texts_to_rewrite(source, splits, ready.parts)
        for variant in (v for sub, v in ready.todo if sub == subset):
            name = config_name(variant.base_name, subset, source.multi_subset)
            if isinstance(variant, RuleVariant):
                configs.append(ConfigPlan(name, len(dict.fromkeys(texts)), 0, 0, 0))
                continue
            groups = field_groups(rewritten, source.text_fields, ready.languages[subset], variant)
            units = [
                unit
                for g in groups
                for unit in plan_texts(
                    g.texts, g.variant, model, cache, known=known, source_language=g.language,
                    dataset_id=f"{source.name}/{subset}",
                )
            ]  # fmt: skip
            cached = sum(hit for _, hit, _ in units)
            made = [(ident, tokens) for ident, hit, tokens in units if not hit]
            shared = sum(1 for ident, _ in made if ident in seen)
            tokens = sum(n for ident, n in dict(made).items() if ident not in seen)
            seen.update(ident for ident, _, _ in units)
            sent = sum(len(texts_to_send(g.texts, g.variant)) for g in groups)
            configs.append(
                ConfigPlan(name, sent, len(units), cached if known else None, shared, tokens)
            )
    return GenPlan(output, tuple(configs), known)


def _described(backend: Backend | None) -> Mapping[str, Any] | None:
    if backend is None:
        return {}
    unloaded = getattr(backend, "describe_unloaded", None)
    if unloaded is not None:
        described: Mapping[str, Any] | None = unloaded()
        return described
    backend.load()  # a server: checks it answers and serves the model, loads nothing here
    return backend.describe()


def plan_texts(
    texts: list[str],
    variant: Variant,
    model: Any,
    cache: GenerationCache,
    *,
    known: bool,
    source_language: Language | None,
    dataset_id: str,
) -> list[tuple[str, bool, int]]:
    """(identity, cached, expected output tokens) of every first-attempt call
    rewrite_texts would need for the texts: the cache key where the call's input is known
    (the text, or a cached output of the step before), else the identity of the chain of
    calls that leads to it."""
    units: list[tuple[str, bool, int]] = []
    for text in texts_to_send(texts, variant):
        plan = variant.step_languages(text, source_language, dataset_id)
        given: str | None = text  # the step's input, while the cache knows it
        ident = ""
        tokens = 0
        for step, lang in enumerate(plan):
            tokens = call_tokens(variant, step, given, tokens)
            if given is None:
                code = lang.code if lang else None
                ident = row_key(after=ident, step=step, prompt=variant.prompts[step].sha256,
                                language=code)  # fmt: skip
                units.append((ident, False, tokens))
                continue
            ident = call_key(given, variant, model, step, lang, 1)
            made = _cached(given, variant, model, step, lang, cache) if known else None
            units.append((ident, made is not None, tokens))
            if made is not None and not made.text.strip():  # the chain ends here
                units += [(f"{ident}:{later}", True, 0) for later in range(step + 1, len(plan))]
                break
            given = made.text if made is not None else None
    return units


def _cached(
    given: str,
    variant: Variant,
    model: Any,
    step: int,
    lang: Language | None,
    cache: GenerationCache,
) -> Generation | None:
    """The cached outcome of a first-attempt call, following its larger budgets as
    _run_step asks for them; None when a call of that chain is not cached."""
    budget = variant.step_budget(step, given)
    key = call_key(given, variant, model, step, lang, 1)
    made = cache.get_many([key]).get(key)
    while made is not None and made.finish_reason == LENGTH and budget < variant.step_cap(step):
        budget = min(variant.step_cap(step), budget * BUDGET_GROWTH)
        key = call_key(given, variant, model, step, lang, 1, budget)
        made = cache.get_many([key]).get(key)
    return made


CALIBRATE_HINT = (
    "add --calibrate to measure one with a few real calls (kept in the cache), or run gen: "
    "every run records what it measured"
)


def format_plan(plan: GenPlan, calibrate_hint: str = CALIBRATE_HINT) -> str:
    """The plan as gen --dry-run prints it, its estimate last."""
    if not plan.configs:
        return f"nothing to do: every config asked for is already complete in {plan.output}"
    width = max([len("config"), *(len(c.name) for c in plan.configs)])
    lines = [
        f"{'config':<{width}} {'texts':>7} {'calls':>7} {'cached':>7} {'shared':>7} {'to make':>8}"
    ]
    for c in plan.configs:
        cached = "?" if c.cached is None else str(c.cached)
        lines.append(
            f"{c.name:<{width}} {c.texts:>7} {c.calls:>7} {cached:>7} {c.shared:>7} {c.to_make:>8}"
        )
    cached_total = str(sum(c.cached or 0 for c in plan.configs)) if plan.model_known else "?"
    shared_total = sum(c.shared for c in plan.configs)
    lines.append(
        f"{'all':<{width}} {'':>7} {plan.calls:>7} {cached_total:>7} {shared_total:>7} "
        f"{plan.to_make:>8}"
    )
    lines.append(
        "calls: first attempts, one per unique text and step (retries and larger budgets "
        "come on top)\nshared: made once for an earlier config (greedy decoding shares calls "
        f"across seeds)\nnothing was written to {plan.output}"
    )
    if not plan.model_known:
        lines.append(
            "cached: unknown, since the model's precision is known only once it is loaded "
            "(name it with --engine-arg dtype=...); existing configs were not checked."
        )
    if plan.estimate is not None:
        lines += plan.estimate.lines(calibrate_hint)
    return "\n".join(lines)
