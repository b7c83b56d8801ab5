"""LLM judges: any gen backend rates (original, output) pairs with one of our prompts.

Two modes, each a packaged prompt under validate/prompts/:
- `similarity`: how close the two texts are in meaning, 0-5 with one decimal (the STS
  scale, so `judge-calibrate` can hold it against gold STS scores);
- `quality`: how good the output is as a rewrite following its transform's instruction,
  1-5 (for transforms that change the length, the core meaning counts).

Judges decode greedily, and every answer is cached under a key of everything it depends
on (the filled-in prompt, the model, the decoding settings), so re-validating or comparing
runs asks each question once. Two ways to turn the model's answer into a score:
- `reply` (the default): the number is read from the reply by `parse_score`; a reply
  without one clear number in range is kept as unparseable, never counted as a score;
- `expected`: nothing is generated; the score is the mean of the scale's whole numbers
  weighted by the probability that the reply begins with each (as G-Eval does). Small
  models that always write the same digit still rank pairs this way. It needs a backend
  with log-probabilities (see llm/logprobs.py).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

from shiftbench.core.progress import bar as progress_bar
from shiftbench.core.records import GeneratorModel
from shiftbench.errors import InputError
from shiftbench.llm.backends import Backend, Generation, Request, Sampling, get_backend
from shiftbench.llm.cache import GenerationCache, row_key
from shiftbench.llm.calls import call_backend
from shiftbench.llm.logprobs import ask, require_logprobs

JUDGE_TOKENS = 16  # a rating needs a few tokens; a longer reply is cut here
SCORINGS = ("reply", "expected")


@dataclass(frozen=True)
class Mode:
    """A rating mode: its prompt file and the scale its answers must fall in."""

    name: str
    prompt_file: str
    low: float
    high: float


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("similarity", "judge-similarity.txt", 0.0, 5.0),
        Mode("quality", "judge-quality.txt", 1.0, 5.0),
    )
}


@cache
def prompt_template(file_name: str) -> str:
    return (resources.files("shiftbench.validate") / "prompts" / file_name).read_text(
        encoding="utf-8"
    )


_SLOT = re.compile(r"\{(original|output|instruction)\}")


def render(template: str, **values: str) -> str:
    """Fill `{original}`, `{output}` and `{instruction}` in one pass, so braces inside the
    texts themselves are left alone."""
    return _SLOT.sub(lambda m: values.get(m[1], m[0]), template)


# ---------------------------------------------------------------------------- parsing

_NUM = r"(\d+(?:[.,]\d+)?)"
_THINKING = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.S | re.I)
_KEYWORD = re.compile(
    r"\b(?:score|rating|rated|rate|grade|similarity|quality|answer)\b\s*"
    r"(?:is|of|would be|=|:|-)?\s*[*_`\"'(\[]*\s*" + _NUM,
    re.I,
)
_OUT_OF = re.compile(_NUM + r"\s*(?:/|out of)\s*5(?:\.0)?\b", re.I)
_RANGE = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:-|\u2013|\u2014|to)\s*\d+(?:[.,]\d+)?\b"
    r"|\bscale of \d+(?:\s*(?:-|to)\s*\d+)?",
    re.I,
)
_ANY_NUM = re.compile(r"(?<![\w.,])" + _NUM + r"(?![\w]|[.,]\d)")
_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_WORD_NUM = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.I)


class Parsed(NamedTuple):
    """The score read from a reply, or None and why not."""

    score: float | None
    problem: str | None = None  # "empty", "no number", "ambiguous", "out of range"


def parse_score(reply: str, mode: Mode) -> Parsed:
    """The rating in a judge's reply.

    In order: a number right after a word like "score" or "rating"; a number written
    "N/5" or "N out of 5"; otherwise the one number the reply holds once scale ranges
    such as "0-5" are set aside (two different numbers make it ambiguous); otherwise a
    number word ("four"). Reasoning inside <think> tags is skipped. The number must lie
    on the mode's scale.
    """
    text = _THINKING.sub(" ", reply).strip()
    if not text:
        return Parsed(None, "empty")
    found: float | None = None
    for pattern in (_KEYWORD, _OUT_OF):
        match = pattern.search(text)
        if match:
            found = _number(match[1])
            break
    if found is None:
        bare = _RANGE.sub(" ", text)
        values = list(dict.fromkeys(_number(m[1]) for m in _ANY_NUM.finditer(bare)))
        if len(values) > 1:
            return Parsed(None, "ambiguous")
        if values:
            found = values[0]
        else:
            words = list(dict.fromkeys(m[1].lower() for m in _WORD_NUM.finditer(bare)))
            if len(words) > 1:
                return Parsed(None, "ambiguous")
            if not words:
                return Parsed(None, "no number")
            found = float(_WORDS[words[0]])
    if not mode.low <= found <= mode.high:
        return Parsed(None, "out of range")
    return Parsed(round(found, 1))


def _number(text: str) -> float:
    return float(text.replace(",", "."))


# ---------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class Item:
    """One pair to rate; `instruction` is what the rewrite was asked to do (quality)."""

    original: str
    output: str
    instruction: str = ""


@dataclass(frozen=True)
class Rating:
    score: float | None
    reply: str
    problem: str | None
    finish_reason: str


def parse_spec(spec: str) -> tuple[str, str | None, str | None]:
    """`BACKEND[:MODEL][@URL]` as (backend, model, base URL). The model may hold colons
    (ollama tags); the URL comes after the last " @http"."""
    url = None
    if "@http" in spec:
        spec, _, rest = spec.rpartition("@http")
        url = "http" + rest
    backend, _, model = spec.partition(":")
    if not backend:
        raise InputError(f"judge {spec!r}: name a backend, as BACKEND[:MODEL][@URL]")
    return backend, model or None, url


def build_backend(spec: str, **options: Any) -> Backend:
    """A loaded backend for a judge spec; `options` are the backend's own (concurrency...)."""
    name, model, url = parse_spec(spec)
    if url is not None:
        options["base_url"] = url
    backend = get_backend(name, model, **options)
    backend.load()
    return backend


class Judge:
    """One backend and model rating pairs in one mode."""

    def __init__(
        self,
        backend: Backend,
        mode: str,
        *,
        max_new_tokens: int = JUDGE_TOKENS,
        scoring: str = "reply",
    ) -> None:
        if mode not in MODES:
            raise InputError(f"unknown judge mode {mode!r}; available: {', '.join(MODES)}")
        if scoring not in SCORINGS:
            raise InputError(f"unknown judge scoring {scoring!r}; available: {', '.join(SCORINGS)}")
        if scoring == "expected":
            require_logprobs(backend, "a judge scoring by expectation")
        self.scoring = scoring
        self.backend = backend
        self.mode = MODES[mode]
        self.template = prompt_template(self.mode.prompt_file)
        self.sampling = Sampling(temperature=0.0, top_p=1.0, max_new_tokens=max_new_tokens)

    @property
    def scale(self) -> tuple[float, float]:
        return (self.mode.low, self.mode.high)

    @property
    def model(self) -> GeneratorModel:
        return self.backend.describe()["model"]

    @property
    def key(self) -> str:
        """How reports name this judge: judge-<mode>:<backend>:<model id>, with ":expected"
        after it when it scores by expectation."""
        key = f"judge-{self.mode.name}:{self.backend.name}:{self.model['id']}"
        return key + (":expected" if self.scoring == "expected" else "")

    def describe(self) -> dict[str, Any]:
        return {
            "kind": f"judge-{self.mode.name}",
            "scale": [self.mode.low, self.mode.high],
            "scoring": self.scoring,
            "prompt_sha256": hashlib.sha256(self.template.encode("utf-8")).hexdigest(),
            "sampling": self.sampling.as_dict(),
            **self.backend.describe(),
        }

    def rate(
        self, items: list[Item], cache: GenerationCache, *, quiet: bool = True, label: str = ""
    ) -> list[Rating]:
        """A rating per item, in order: cached answers first, then the rest asked for chunk
        by chunk, each answer cached as it arrives (a crash keeps them)."""
        prompts = [self._prompt(i) for i in items]
        model = self.model
        sampling = self.sampling.as_dict()
        keys = [
            row_key(
                kind="judge", prompt=p, model=model, backend=self.backend.name, sampling=sampling
            )
            for p in prompts
        ]
        answers = cache.get_many(list(dict.fromkeys(keys)))
        todo = list({k: p for k, p in zip(keys, prompts, strict=True) if k not in answers}.items())
        # closed however the work ends, so an error starts a line of its own
        with progress_bar(len(todo), label or self.key, unit="pair", quiet=quiet) as progress:
            for start in range(0, len(todo), self.backend.chunk_size):
                chunk = todo[start : start + self.backend.chunk_size]
                requests = [Request(p, 0, self.sampling.max_new_tokens) for _, p in chunk]

                def keep(index: int, gen: Generation, chunk: list[tuple[str, str]] = chunk) -> None:
                    key = chunk[index][0]
                    cache.put_many({key: gen})
                    answers[key] = gen
                    progress.update(1)

                call_backend(self.backend, requests, self.sampling, keep)
        ratings = []
        for key in keys:
            gen = answers[key]
            parsed = parse_score(gen.text, self.mode)
            ratings.append(Rating(parsed.score, gen.text, parsed.problem, gen.finish_reason))
        return ratings

    def score(
        self, items: list[Item], cache: GenerationCache, *, quiet: bool = True, label: str = ""
    ) -> list[tuple[float | None, str | None, str | None]]:
        """(score, reply, problem) per item, as every measure in a validation report."""
        if self.scoring == "expected":
            return self._expected(items, cache, quiet=quiet, label=label)
        return [
            (r.score, r.reply, r.problem) for r in self.rate(items, cache, quiet=quiet, label=label)
        ]

    def _expected(
        self, items: list[Item], cache: GenerationCache, *, quiet: bool, label: str
    ) -> list[tuple[float | None, str | None, str | None]]:
        points = tuple(str(k) for k in range(int(self.mode.low), int(self.mode.high) + 1))
        prompts = [self._prompt(i) for i in items]
        found = ask(self.backend, prompts, points, cache, quiet=quiet, label=label or self.key)
        values: list[tuple[float | None, str | None, str | None]] = []
        for answer in found:
            weights = {int(k): math.exp(lp) for k, lp in answer.items() if lp is not None}
            total = sum(weights.values())
            if not total:
                values.append((None, None, "no rating among the top log-probabilities"))
            else:
                mean = sum(k * w for k, w in weights.items()) / total
                values.append((round(mean, 4), None, None))
        return values

    def _prompt(self, item: Item) -> str:
        return render(
            self.template,
            original=item.original,
            output=item.output,
            instruction=item.instruction,
        )


# What each transform asked for, as the quality prompt tells the judge ({language}: the
# language the output should be in).
