"""The generation engine: every unique text through a transform's calls, cached per call."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shiftbench.core.data.runfolder import IDENTICAL, IDENTITY_KEPT, OK, TRUNCATED, usable
from shiftbench.core.progress import Bar, bar
from shiftbench.core.records import GeneratorModel
from shiftbench.core.text.checks import Case, first_failure, gen_checks, identical, negation_cues
from shiftbench.core.text.languages import DEFAULT_POOL, LANGUAGES, Language, draw
from shiftbench.core.text.transforms import (
    FLAT,
    PER_DATASET,
    PER_TEXT,
    PIVOT,
    SOURCE,
    Prompt,
    Transform,
)
from shiftbench.llm.backends import Backend, Generation, Request, Sampling
from shiftbench.llm.cache import GenerationCache, row_key
from shiftbench.llm.calls import CACHED, NOT_CACHED, call_backend

EMPTY_OUTPUT = "empty"
EMPTY_INPUT = "empty-input"
NOT_APPLICABLE = "not-applicable"  # a control that has nothing to work on in this text
UNKNOWN_LANGUAGE = "the same language as the text"
LENGTH = "length"  # the finish reason of an output cut at its token budget
BUDGET_GROWTH = 2  # a cut call is asked again with this many times its budget, up to the cap
SHARED_SEED = "shared: greedy decoding"  # the seed entry of a greedy call's cache key


@dataclass(frozen=True)
class Variant:
    """One transform at one seed, with everything its outputs depend on."""

    transform: Transform
    prompts: tuple[Prompt, ...]
    seed: int
    sampling: Sampling
    pool: tuple[Language, ...] = tuple(LANGUAGES[c] for c in DEFAULT_POOL)
    prompt_variant: int = 1
    max_attempts: int = 3

    def step_budget(self, step: int, text: str) -> int:
        """The first token budget of call `step` on input `text`: grown with the input up
        to the cap, or, with flat budgets, --max-new-tokens when given, else the step's
        flat budget."""
        if self.sampling.budgets == FLAT:
            return self.sampling.max_new_tokens or self.transform.steps[step].flat_tokens
        return self.transform.steps[step].budget.tokens(text, self.cap)

    def step_cap(self, step: int) -> int:
        """The largest budget call `step` is asked again with when its output is cut: the
        cap, or with flat budgets the flat budget itself (no second, larger call)."""
        if self.sampling.budgets == FLAT:
            return self.step_budget(step, "")
        return self.cap

    def budget_descriptions(self) -> list[str]:
        """Each call's budget rule, as shiftbench.json records it."""
        if self.sampling.budgets == FLAT:
            return [f"{self.step_budget(i, '')} (flat)" for i in range(self.transform.calls)]
        return [step.budget.describe() for step in self.transform.steps]

    @property
    def cap(self) -> int:
        """The most tokens one call may produce: --max-new-tokens when given (below or
        above the transform's own cap), else the transform's cap."""
        return self.sampling.max_new_tokens or self.transform.max_new_tokens

    @property
    def base_name(self) -> str:
        variant = f"-p{self.prompt_variant}" if self.prompt_variant != 1 else ""
        return f"{self.transform.name}{variant}-s{self.seed}"

    def settings_sha256(self, described: Mapping[str, Any]) -> str:
        """A hash of every setting the variant's rows depend on (not batch size or order).

        The seed stays in it under greedy decoding too, where calls leave it out: it still
        draws the languages of translation, cross-translation and back-translation, and a
        greedy config made before calls were shared keeps its hash (its rows are the same).
        """
        return row_key(
            transform=self.transform.name,
            transform_version=self.transform.version,
            prompts=[p.sha256 for p in self.prompts],
            model=described["model"],
            sampling=self.sampling.as_dict(),
            seed=self.seed,
            pool=[lang.code for lang in self.pool],
            max_attempts=self.max_attempts,
            checks=list(gen_checks(self.transform.name)),
            budget_growth=BUDGET_GROWTH,
        )

    def drawn_pool(self) -> tuple[Language, ...]:
        """The languages a draw picks from: the pool, and English for a per-text draw of
        a transform whose pool has it (back-translation's pivots)."""
        if (
            self.transform.draw == PER_TEXT
            and self.transform.pool_has_english
            and LANGUAGES["en"] not in self.pool
        ):
            return (*self.pool, LANGUAGES["en"])
        return self.pool

    def step_languages(
        self, text: str, source: Language | None, dataset_id: str
    ) -> tuple[Language | None, ...]:
        """The language each call writes in, for this text.

        Draws depend on the seed and the text (or the dataset), never on position.
        """
        other = None
        if self.transform.draw == PER_DATASET:
            other = draw(self.pool, source, self.transform.name, self.seed, dataset_id)
        elif self.transform.draw == PER_TEXT:
            other = draw(self.drawn_pool(), source, self.transform.name, self.seed, text)
        return tuple(source if s.language == SOURCE else other for s in self.transform.steps)


@dataclass(frozen=True)
class RowResult:
    """The outcome for one unique input text, and the language of every call."""

    text: str
    status: str
    attempt: int
    finish_reason: str
    languages: tuple[str, ...] = field(default=())


def needs_source_language(transform: Transform) -> bool:
    """Transforms that must know the source language to be done right."""
    return transform.draw is not None or any(s.language == PIVOT for s in transform.steps)


def rewrite_texts(
    texts: list[str],
    variant: Variant,
    backend: Backend,
    cache: GenerationCache,
    *,
    source_language: Language | None,
    dataset_id: str,
    quiet: bool = False,
) -> dict[str, RowResult]:
    """Transform each unique text once; identical texts share one result.

    A call cut at its token budget is asked again with a larger budget (see _run_step). A
    chain of calls still cut at the cap is `truncated`; one whose output fails an
    automatic check (validate.checks.gen_checks: empty, identical to the input except for
    back-translation, a reasoning or prefix leak, runaway length; for negation, no change
    in the number of negation cues) has the check's name as its status. Either runs again
    with the next attempt's seeds (when sampling; greedy decoding would only repeat
    itself), up to `variant.max_attempts`. The last output stays, with the check's name as
    its status: it is never replaced by the input. A back-translation equal to its input is
    kept as `identical`, not retried. A control made of negated texts only (the affirmative
    paraphrase) never sends a text without a negation cue: it is `not-applicable`, with no
    output.
    """
    model = backend.describe()["model"]
    name = variant.transform.name
    checks = gen_checks(name)
    language = source_language.code if source_language else None
    pending = texts_to_send(texts, variant)
    sent = set(pending)
    results = {t: RowResult("", EMPTY_INPUT, 0, "") for t in texts if not t.strip()}
    results.update({t: RowResult("", NOT_APPLICABLE, 0, "") for t in texts
                    if t.strip() and t not in sent})  # fmt: skip
    plans = {t: variant.step_languages(t, source_language, dataset_id) for t in pending}
    attempts = variant.max_attempts if variant.sampling.sampled else 1
    calls = variant.transform.calls
    # The count is of the first attempt's calls (texts, for a one-call transform), fixed
    # here; a call made again (a larger budget, another attempt) counts as a retry, so the
    # ETA never runs out while work goes on. Closed however the work ends, so an error
    # starts a line of its own.
    unit = "text" if calls == 1 else "call"
    with bar(len(pending) * calls, variant.base_name, unit=unit, quiet=quiet) as progress:
        for attempt in range(1, attempts + 1):
            current, cut = _attempt(pending, variant, model, plans, attempt, backend, cache,
                                    progress)  # fmt: skip
            for text in pending:
                codes = tuple(lang.code if lang else "" for lang in plans[text])
                output = current.get(text, "")
                status = _status(text, output, text in cut, name, checks, language)
                reason = LENGTH if text in cut else "stop"
                results[text] = RowResult(output, status, attempt, reason, codes)
            pending = [t for t in pending if not usable(results[t].status, name)]
            if not pending:
                break
    return results


def _attempt(
    pending: list[str],
    variant: Variant,
    model: GeneratorModel,
    plans: dict[str, tuple[Language | None, ...]],
    attempt: int,
    backend: Backend,
    cache: GenerationCache,
    progress: Bar,
) -> tuple[dict[str, str], set[str]]:
    """One attempt at each pending text: its transform's calls in turn, each on the last
    one's output. The output per text (none for a text whose chain came back empty), and
    the texts whose output was cut at the token budget."""
    calls = variant.transform.calls
    current = {t: t for t in pending}
    cut: set[str] = set()
    for step in range(calls):
        made = _run_step(_StepCalls(variant, model, step, plans, backend, cache), current,
                         attempt, progress)  # fmt: skip
        for text in list(current):
            if made[text].finish_reason == LENGTH:
                cut.add(text)
            if made[text].text.strip():
                current[text] = made[text].text
            else:
                del current[text]
                if attempt == 1:  # its later calls will not be made
                    progress.update(calls - step - 1)
    return current, cut


def texts_to_send(texts: list[str], variant: Variant) -> list[str]:
    """The unique texts the backend is asked about, in order: not empty, and with a
    negation cue for a control made of negated texts only."""
    pending = [t for t in dict.fromkeys(texts) if t.strip()]
    if variant.transform.negated_only:
        pending = [t for t in pending if negation_cues(t)]
    return pending


def _status(
    text: str, output: str, cut: bool, transform: str, checks: tuple[str, ...], language: str | None
) -> str:
    """A chain's status: `truncated` when a call was still cut at the cap, else the first
    check it fails, else `identical` (IDENTITY_KEPT transforms only) or `ok`."""
    if cut:
        return TRUNCATED
    failed = first_failure(text, output, transform, checks, language)
    if failed is not None:
        return failed
    if transform in IDENTITY_KEPT and identical(Case(text, output, transform)):
        return IDENTICAL
    return OK


def call_key(
    text: str,
    variant: Variant,
    model: GeneratorModel,
    step: int,
    lang: Language | None,
    attempt: int,
    budget: int | None = None,
) -> str:
    """Everything one call's output depends on (docs/concepts/determinism.md), and nothing else.

    `budget` is given for a call asked again with a larger budget only: the first budget
    follows from the text, the transform and the sampling settings already in the key.
    Greedy decoding leaves the seed out (see call_seed), so the seeds of a run share the
    call, and the backend seed taken from the key does not depend on the run's seed.
    """
    return row_key(
        text=text,
        transform=variant.transform.name,
        transform_version=variant.transform.version,
        step=step,
        prompt=variant.prompts[step].sha256,
        model=model,
        sampling=variant.sampling.as_dict(),
        seed=call_seed(variant),
        language=lang.code if lang else None,
        attempt=attempt,
        **({"max_new_tokens": budget} if budget is not None else {}),
    )


def call_seed(variant: Variant) -> int | str:
    """The seed as a call key names it: the variant's seed when sampling, and a marker
    saying why it is absent for greedy decoding, where a call's output does not depend on
    it (the seed still draws the languages, and those are in the key on their own)."""
    return variant.seed if variant.sampling.sampled else SHARED_SEED


@dataclass(frozen=True)
class Call:
    """One call to make: its cache key, its seed and its token budget."""

    key: str
    seed: int
    budget: int


@dataclass(frozen=True)
class _StepCalls:
    """Call `step` of a variant's chain, as every text of it is sent: the generator
    (`model` as it describes itself), each text's languages (`plans`), and the cache."""

    variant: Variant
    model: GeneratorModel
    step: int
    plans: dict[str, tuple[Language | None, ...]]
    backend: Backend
    cache: GenerationCache


def _run_step(
    at: _StepCalls, current: dict[str, str], attempt: int, progress: Bar
) -> dict[str, Generation]:
    """Each text's output of call `at.step`, its input being `current[text]`.

    An output cut at its budget (finish reason `length`) is asked for again with
    BUDGET_GROWTH times the budget, never more than the cap, and the same seed, until it
    ends by itself or its budget is the cap. The budgets depend on the input only, so the
    retries are as deterministic as the first call.
    """
    variant, step, plans = at.variant, at.step, at.plans
    calls = {}
    for text, given in current.items():
        key = call_key(given, variant, at.model, step, plans[text][step], attempt)
        calls[text] = Call(key, int(key[:15], 16), variant.step_budget(step, given))
    outputs: dict[str, Generation] = {}
    # the first attempt's first calls move the count; every call after them is a retry
    count = progress.update if attempt == 1 else progress.retried
    while calls:
        made = _generate_missing(at, calls, current, count)
        again = {}
        for text, call in calls.items():
            outputs[text] = made[call.key]
            if outputs[text].finish_reason == LENGTH and call.budget < variant.step_cap(step):
                tokens = min(variant.step_cap(step), call.budget * BUDGET_GROWTH)
                lang = plans[text][step]
                key = call_key(current[text], variant, at.model, step, lang, attempt, tokens)
                again[text] = Call(key, call.seed, tokens)
        calls = again
        count = progress.retried
    return outputs


def _generate_missing(
    at: _StepCalls, calls: dict[str, Call], inputs: dict[str, str], count: Callable[[int], None]
) -> dict[str, Generation]:
    """Outputs for every call: cached ones, then the rest generated chunk by chunk; `count`
    hears how many texts each result finishes.

    Each result is committed to the cache the moment it arrives, so a crash loses only
    the requests in flight. Texts that share a key are sent once, and a key another job
    of the run is generating already is waited for, not sent again.
    """
    cache = at.cache
    keys = list(dict.fromkeys(c.key for c in calls.values()))
    outputs = cache.get_many(keys)
    texts_per_key = Counter(c.key for c in calls.values())
    count(sum(n for k, n in texts_per_key.items() if k in outputs))
    text_of = {c.key: t for t, c in calls.items()}
    missing = [k for k in keys if k not in outputs]
    while missing:
        mine, theirs = cache.claim(missing)
        try:
            _send(at, [(k, text_of[k]) for k in mine], calls, inputs, outputs,
                  lambda k: count(texts_per_key[k]))  # fmt: skip
        finally:
            cache.release([k for k in mine if k not in outputs])
        waited = cache.wait_for(theirs)
        outputs.update(waited)
        count(sum(texts_per_key[k] for k in waited))
        missing = [k for k in theirs if k not in waited]  # given up by their job: ours now
    return outputs


def _send(
    at: _StepCalls,
    todo: list[tuple[str, str]],
    calls: dict[str, Call],
    inputs: dict[str, str],
    outputs: dict[str, Generation],
    done: Callable[[str], None],
) -> None:
    """Generate the (key, text) calls chunk by chunk, keeping each result as it comes."""
    backend, cache, plans, step = at.backend, at.cache, at.plans, at.step
    prompt = at.variant.prompts[step]
    for start in range(0, len(todo), backend.chunk_size):
        chunk = todo[start : start + backend.chunk_size]
        requests = []
        for _, text in chunk:
            lang = plans[text][step]
            rendered = prompt.render(inputs[text], lang.name if lang else UNKNOWN_LANGUAGE)
            requests.append(Request(rendered, calls[text].seed, calls[text].budget))

        def keep(index: int, gen: Generation, chunk: list[tuple[str, str]] = chunk) -> None:
            key = chunk[index][0]
            cache.put_many({key: gen})
            outputs[key] = gen
            done(key)

        kept = CACHED if cache.path is not None else NOT_CACHED
        call_backend(backend, requests, at.variant.sampling, keep, kept)
