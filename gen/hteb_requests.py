"""gen --protocol hteb --hteb-prompts: the requests HTEB's own generator sends.

HTEB (v1.1, hteb/generation.py) rewrites a dataset text slot by text slot: every
non-blank text of every record is sent, a text that occurs twice is sent twice, and
blank texts are kept blank without a call. Each request is a chat of two turns, the
stage's instruction as the system turn and the bare text as the user turn, with the
output constrained to a JSON object holding the rewrite under `transformed_text`; the
reply is parsed back out of that object (a reply that is not JSON gets one rescue: the
first `{...}` in it, or the field's quoted value). A reply cut at the token budget, or
whose text is unusable (empty, a placeholder, punctuation only), is asked again, up to
three retries, with the seed plus the retry's number; a text still failing is written
blank and its later stages are not sent. The instructions are the user's own copy of
HTEB's prompts (`GENERATION_PROMPTS` in its hteb/prompts.py), read here as data, never
run and never shipped with shiftbench.

Languages follow HTEB's draws: translation's target once per dataset and seed (the
settings hash of the two), cross-translation's and back-translation's pivot per text
from `random.Random(seed + ordinal)`, where the ordinal numbers the dataset's non-blank
texts as HTEB does (record by record; for pair tasks every first text, then every
second; across all of a dataset's languages).
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, cast

from shiftbench.core.data.hteb import (
    HTEB_NAMES,
    MTEB_NAMES,
    cross_translation_target,
    translation_target,
    unusable,
)
from shiftbench.core.data.listfields import field_texts
from shiftbench.core.data.runfolder import FALLBACK, OK, TRUNCATED, ConfigData, tally_status
from shiftbench.core.messages import option
from shiftbench.core.progress import Bar, bar
from shiftbench.core.records import ConfigRecord, DataRow, SamplingRecord
from shiftbench.core.text.languages import LANGUAGES
from shiftbench.core.text.transforms import PIVOT, Prompt, Transform
from shiftbench.errors import InputError
from shiftbench.gen.configs import SubsetVariant, _drawn_languages, _variant_row, variant_config
from shiftbench.gen.hteb_slots import (
    TITLE,
    Slot,
    subset_slots,
)
from shiftbench.gen.rewrite import EMPTY_INPUT, NOT_APPLICABLE, RowResult, Variant
from shiftbench.llm.backends import Backend, Generation, Request, Sampling
from shiftbench.llm.cache import GenerationCache, row_key
from shiftbench.llm.calls import CACHED, NOT_CACHED, call_backend

# HTEB's stages of each transformation (hteb/config.py transformation_stages)
STAGES = {
    "backtranslation": ("backtranslate_forward", "backtranslate_backward"),
    "summarised_expansion": ("expansion", "summarise"),
}
PROMPTS_NAME = "GENERATION_PROMPTS"  # the dict HTEB's hteb/prompts.py defines
PROMPTS_FILE = "prompts.py"
# HTEB's generation defaults (hteb/config.py GenerationSettings)
MAX_TOKENS = 512
EXPANSION_MAX_TOKENS = 1024  # its expansion stage's own default
MAX_RETRIES = 3
REPETITION_PENALTY = 1.0
OUTPUT_FIELD = "transformed_text"
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {OUTPUT_FIELD: {"type": "string"}},
    "required": [OUTPUT_FIELD],
}
# The backtranslation pivots: English before the translation pool
PIVOT_POOL = ("en", "es", "fr", "de", "tr", "ar")
UNKNOWN_SOURCE = "the input language"
UNKNOWN_RETURN = "the original language"
LENGTH = "length"
_QUOTED_FIELD = re.compile(r'"transformed_text"\s*:\s*("(?:\\.|[^"\\])*")')
_TRANSLATING = ("translation", "cross_translation")

# What OpenAI-compatible servers (vLLM's among them) take for HTEB's engine settings:
# the JSON output constraint, the repetition penalty and its chat template's switch
REQUEST_EXTRAS: dict[str, object] = {
    "repetition_penalty": REPETITION_PENALTY,
    "response_format": {
        "type": "json_schema",
        "json_schema": {"name": OUTPUT_FIELD, "schema": OUTPUT_SCHEMA},
    },
    "chat_template_kwargs": {"enable_thinking": False},
}
BACKENDS = ("openai",)  # backends that send a request's chat turns and extra fields as given


def stages(transform: str) -> tuple[str, ...]:
    """HTEB's stage names for one of shiftbench's transform names."""
    theirs = HTEB_NAMES[transform]
    return STAGES.get(theirs, (theirs,))


def read_prompts(path: Path) -> tuple[Path, dict[str, str]]:
    """The user's copy of HTEB's prompts: `path` is its hteb/prompts.py, or a folder
    holding prompts.py or hteb/prompts.py. The file is parsed, never run: it must assign
    GENERATION_PROMPTS a literal dict of instruction strings, one per stage.

    Raises:
        InputError: The file is missing or not of that shape.
    """
    given = f"{option('hteb_prompts')} {path}"
    if path.is_dir():
        found = [p for p in (path / PROMPTS_FILE, path / "hteb" / PROMPTS_FILE) if p.is_file()]
        if not found:
            raise InputError(
                f"{given}: holds no {PROMPTS_FILE} (nor hteb/{PROMPTS_FILE}); give HTEB's "
                f"hteb/{PROMPTS_FILE} or the folder holding it"
            )
        path = found[0]
    elif not path.is_file():
        raise InputError(f"{given}: no such file or folder")
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x})") from None
    except SyntaxError as exc:
        raise InputError(f"{path}:{exc.lineno}: not Python, as HTEB's prompts.py is") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    value = None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == PROMPTS_NAME for t in targets):
            value = getattr(node, "value", None)
    if value is None:
        raise InputError(f"{path}: assigns no {PROMPTS_NAME}, the dict of HTEB's instructions")
    try:
        prompts = ast.literal_eval(value)
    except ValueError:
        raise InputError(
            f"{path}:{value.lineno}: {PROMPTS_NAME} is not a literal dict of strings"
        ) from None
    if not isinstance(prompts, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in prompts.items()
    ):
        raise InputError(f"{path}:{value.lineno}: {PROMPTS_NAME} is not a dict of strings")
    wanted = [s for name in HTEB_NAMES for s in stages(name)]
    missing = [s for s in dict.fromkeys(wanted) if s not in prompts]
    if missing:
        raise InputError(
            f"{path}:{value.lineno}: {PROMPTS_NAME} has no instruction for {', '.join(missing)}"
        )
    blank = [s for s in dict.fromkeys(wanted) if not prompts[s].strip()]
    if blank:
        raise InputError(f"{path}:{value.lineno}: {PROMPTS_NAME}[{blank[0]!r}] is empty")
    return path, {s: prompts[s] for s in dict.fromkeys(wanted)}


def stage_prompts(
    transform: Transform, path: Path, prompts: Mapping[str, str]
) -> tuple[Prompt, ...]:
    """One Prompt per call of `transform`: HTEB's instruction for each of its stages,
    recorded with the file it was read from."""
    return tuple(Prompt(prompts[s], f"hteb:{path}#{s}") for s in stages(transform.name))


@dataclass(frozen=True)
class ChatRequest(Request):
    """A request sent as HTEB sends it: `system` as the system turn, the text alone as
    the user turn."""

    system: str = ""

    @property
    def messages(self) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.prompt},
        ]


@dataclass(frozen=True)
class HtebSampling(Sampling):
    """Sampling as HTEB's engine takes it: the JSON output constraint, the repetition
    penalty and the chat template's thinking switch go with every request."""

    hteb: ClassVar[bool] = True

    def sent(self) -> dict[str, Any]:
        return {**super().sent(), **REQUEST_EXTRAS}

    def as_dict(self) -> SamplingRecord:
        return {**super().as_dict(), "hteb_request": REQUEST_EXTRAS}


def dataset_name(task: str | None, name: str) -> str:
    """The dataset name HTEB draws translation's language with: its own name for a dataset
    it ships, else the MTEB task's name."""
    return MTEB_NAMES.get(task or name, task or name)


def _name(code: str) -> str:
    return LANGUAGES[code].name


def stage_languages(
    stage: str, slot: Slot, seed: int, dataset: str, record_languages: tuple[str, ...]
) -> tuple[str, str]:
    """The (source, target) language names of `stage`'s instruction for `slot`;
    `record_languages` are the codes of every text of its record (translation leaves them
    all out, cross-translation and back-translation the slot's own)."""
    own = (slot.language.code,) if slot.language else ()
    source = slot.language.name if slot.language else UNKNOWN_SOURCE
    assert slot.ordinal is not None
    if stage == "translation":
        return source, _name(translation_target(dataset, seed, record_languages or own))
    if stage == "cross_translation":
        return source, _name(cross_translation_target(seed, slot.ordinal, own))
    if stage.startswith("backtranslate"):
        pool = tuple(c for c in PIVOT_POOL if c not in own) or PIVOT_POOL
        pivot = _name(random.Random(seed + slot.ordinal).choice(pool))
        if stage == "backtranslate_forward":
            return source, pivot
        return pivot, source if slot.language else UNKNOWN_RETURN
    return source, source


def instruction(template: str, source: str, target: str) -> str:
    return template.replace("{source_language}", source).replace("{target_language}", target)


def usable_text(value: Any) -> str | None:
    """An output HTEB keeps, stripped; None for one it gives up on."""
    return None if unusable(value) else str(value).strip()


def parsed_reply(reply: str) -> str | None:
    """The rewrite in a reply to HTEB's JSON request, or None when there is none: the
    reply as a JSON object, else (as HTEB rescues a broken one) the text between its
    fences, its first `{` to its last `}`, or the quoted value of its field."""
    text = reply.strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return _rescued(text)
    return usable_text(value.get(OUTPUT_FIELD)) if isinstance(value, dict) else None


def _rescued(text: str) -> str | None:
    tried = []
    if text.startswith("```") and text.endswith("```") and len(text.splitlines()) >= 3:
        tried.append("\n".join(text.splitlines()[1:-1]))
    first, last = text.find("{"), text.rfind("}")
    if first >= 0 and last > first:
        tried.append(text[first : last + 1])
    for candidate in dict.fromkeys(tried):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(candidate)
            except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
                continue
        if isinstance(value, dict):
            found = usable_text(value.get(OUTPUT_FIELD))
            if found is not None:
                return found
    quoted = _QUOTED_FIELD.search(text)
    if quoted is None:
        return None
    try:
        return usable_text(json.loads(quoted.group(1)))
    except json.JSONDecodeError:
        return None


@dataclass(frozen=True)
class SlotResult:
    """A slot's outcome: its last stage's text ("" when given up), status, tries of its
    last stage, the finish reason and each stage's target language code."""

    text: str
    status: str
    attempt: int
    finish_reason: str
    languages: tuple[str, ...]


def stage_tokens(stage: str, max_new_tokens: int | None) -> int:
    """HTEB's output allowance of a stage: --max-new-tokens for every stage when given
    (as a dataset's own max_tokens is), else 1024 for expansion and 512 for the rest."""
    if max_new_tokens is not None:
        return max_new_tokens
    return EXPANSION_MAX_TOKENS if stage == "expansion" else MAX_TOKENS


def rewrite_slots(
    found: list[Slot],
    variant: Variant,
    backend: Backend,
    cache: GenerationCache,
    *,
    dataset: str,
    record_languages: tuple[str, ...],
    progress: Bar | None = None,
) -> list[SlotResult]:
    """Each slot through HTEB's stages, request for request as its generator sends them.

    A stage sends every slot still going, then again (seed + retry) those whose reply was
    cut at the budget or held no usable text, the variant's `max_attempts` tries in all;
    the rest of a slot's stages are sent only once a stage gave it a text. Every call is
    cached under its whole request and its slot's ordinal, so a resumed run sends only
    what is missing and two slots of the same text are still two calls.
    """
    seed, sampling, prompts = variant.seed, variant.sampling, variant.prompts
    model = backend.describe()["model"]
    names = stages(variant.transform.name)
    results: dict[int, SlotResult] = {}
    current = {i: s.text for i, s in enumerate(found) if s.ordinal is not None}
    for i, s in enumerate(found):
        if s.ordinal is None:  # blank: kept blank, never sent
            results[i] = SlotResult(s.text, OK, 0, "", ())
    drawn = {
        i: [stage_languages(stage, found[i], seed, dataset, record_languages) for stage in names]
        for i in current
    }
    for step, stage in enumerate(names):
        budget = stage_tokens(stage, sampling.max_new_tokens)
        pending = list(current)
        cut: set[int] = set()
        tries = dict.fromkeys(pending, 0)
        for attempt in range(variant.max_attempts):
            if not pending:
                break
            requests = {}
            for i in pending:
                source, target = drawn[i][step]
                system = instruction(prompts[step].text, source, target)
                request = ChatRequest(current[i], seed + attempt, budget, system)
                key = row_key(
                    hteb_request=request.messages, model=model, sampling=sampling.as_dict(),
                    seed=request.seed, max_tokens=budget, ordinal=found[i].ordinal,
                    stage=stage, dataset=dataset,
                )  # fmt: skip
                requests[i] = (key, request)
            made = _complete(requests, sampling, backend, cache)
            if progress is not None:  # a retry is counted apart; the total stays
                (progress.retried if attempt else progress.update)(len(pending))
            again = []
            for i in pending:
                tries[i] += 1
                reply = made[requests[i][0]]
                text = None if reply.finish_reason == LENGTH else parsed_reply(reply.text)
                if text is None:
                    again.append(i)
                    if reply.finish_reason == LENGTH:
                        cut.add(i)
                    else:
                        cut.discard(i)
                else:
                    current[i] = text
                    cut.discard(i)
            pending = again
        for i in pending:  # given up: written blank, its later stages never sent
            del current[i]
            codes = _codes(drawn[i], step)
            reason = LENGTH if i in cut else "stop"
            results[i] = SlotResult(
                "", TRUNCATED if i in cut else FALLBACK, tries[i], reason, codes
            )
        if step == len(names) - 1:
            for i, text in current.items():
                results[i] = SlotResult(text, OK, tries[i], "stop", _codes(drawn[i], step))
    return [results[i] for i in range(len(found))]


def _codes(drawn: list[tuple[str, str]], step: int) -> tuple[str, ...]:
    """Each stage's target language as a code ("" for a name no table knows)."""
    by_name = {lang.name: code for code, lang in LANGUAGES.items()}
    return tuple(by_name.get(target, "") for _, target in drawn)


def _complete(
    requests: dict[int, tuple[str, ChatRequest]],
    sampling: Sampling,
    backend: Backend,
    cache: GenerationCache,
) -> dict[str, Generation]:
    """Every request's reply: from the cache, else sent, each kept as it arrives."""
    keys = [k for k, _ in requests.values()]
    outputs = cache.get_many(keys)
    todo = [(k, r) for k, r in requests.values() if k not in outputs]
    for start in range(0, len(todo), backend.chunk_size):
        chunk = todo[start : start + backend.chunk_size]

        def keep(index: int, gen: Generation, chunk: list[tuple[str, ChatRequest]] = chunk) -> None:
            cache.put_many({chunk[index][0]: gen})
            outputs[chunk[index][0]] = gen

        kept = CACHED if cache.path is not None else NOT_CACHED
        call_backend(backend, [r for _, r in chunk], sampling, keep, kept)
    return outputs


def hteb_config(made: SubsetVariant, found: list[Slot], results: list[SlotResult]) -> ConfigData:
    """The variant's config from its slots' results: each row from its own slots (two
    rows holding the same text keep their own rewrites), with the counts and languages
    of every slot."""
    rewritten, variant = made.rows, made.variant
    fields = made.source.text_fields
    name = variant.transform.name
    done: dict[tuple[str, int], dict[str, dict[str, RowResult]]] = {}
    first: dict[str, dict[str, RowResult]] = {f: {} for f in fields}
    used = []
    titles: dict[tuple[str, int], RowResult] = {}
    joined: set[tuple[str, int]] = set()  # reranking documents sent as title and body
    for s, r in zip(found, results, strict=True):
        status = EMPTY_INPUT if s.ordinal is None else r.status
        result = RowResult(r.text, status, r.attempt, r.finish_reason, r.languages)
        used.append(result)
        if s.field not in fields:  # a document's title: written beside its text below
            titles[(s.split, s.row)] = result
            continue
        row = rewritten[s.split][s.row]
        own = field_texts(row[s.field])[s.item]  # the text sent, as the row holds it
        if own != s.text:
            joined.add((s.split, s.row))
        # a document sent once per query it is a candidate of keeps its first rewrite
        done.setdefault((s.split, s.row), {f: {} for f in fields})[s.field].setdefault(own, result)
        first[s.field].setdefault(own, result)
    for split, rows in rewritten.items():  # a row with no slot: no text, or never sent
        for i, row in enumerate(rows):
            kept = done.setdefault((split, i), {f: {} for f in fields})
            for f in fields:
                for text in field_texts(row[f]):
                    if text not in kept[f]:  # a reranking document among no candidates
                        kept[f][text] = RowResult(text, NOT_APPLICABLE, 0, "", ())
                        first[f].setdefault(text, kept[f][text])
    config = variant_config(made, first)
    pivot = any(step.language == PIVOT for step in variant.transform.steps)
    splits = {
        split: [_variant_row(row, fields, done[(split, i)], name, pivot) for i, row in
                enumerate(rows)]
        for split, rows in rewritten.items()
    }  # fmt: skip
    for split, i in joined:  # its rewrite holds the title too: HTEB's candidate text
        row = splits[split][i]
        row[f"original_{TITLE}"] = row.get(TITLE)
        row[TITLE] = ""
    for (split, i), result in titles.items():
        row = splits[split][i]
        row[f"original_{TITLE}"] = row[TITLE]
        row[TITLE] = result.text
        row[f"status_{TITLE}"] = result.status
        if result.status in (FALLBACK, TRUNCATED) and row["status"] == OK:
            row["status"] = result.status  # the row's first failed text
    meta = cast(dict[str, Any], dict(config.meta))
    meta.update(_drawn_languages(variant, used))
    meta["status_counts"] = {split: tally_status(rows) for split, rows in splits.items()}
    meta["hteb_requests"] = {
        "layout": "system instruction, user text",
        "output": f"JSON object with {OUTPUT_FIELD}",
        "seeds": "seed + retry",
        "max_retries": variant.max_attempts - 1,
        "per_slot": True,
    }
    return ConfigData(config.name, cast(ConfigRecord, meta), splits)


def rewrite_subset(
    made: SubsetVariant,
    backend: Backend,
    cache: GenerationCache,
    *,
    start: int,
    context: Mapping[str, list[DataRow]],
    quiet: bool = False,
) -> ConfigData:
    """One config made as HTEB's generator makes it; `start` is the count of non-blank
    texts of the source's earlier subsets (HTEB numbers a dataset's texts across all its
    languages), `context` the subset's run-folder splits (a reranking's judgements and
    candidate lists)."""
    source, variant, languages = made.source, made.variant, made.languages
    found = subset_slots(source, made.rows, context, languages, start)
    sent = sum(s.ordinal is not None for s in found)
    with bar(sent * variant.transform.calls, variant.base_name, unit="call", quiet=quiet) as shown:
        results = rewrite_slots(
            found, variant, backend, cache, dataset=dataset_name(source.mteb_task, source.name),
            record_languages=tuple(lang.code for lang in languages if lang),
            progress=shown,
        )  # fmt: skip
    return hteb_config(made, found, results)
