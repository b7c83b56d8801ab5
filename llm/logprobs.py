"""First-token log-probabilities of chosen answers, asked of a backend and cached.

ParaPLUIE (answers Yes and No) and judges that score by expectation (answers "0" to "5")
both need, for a prompt, how likely the model's reply is to begin with each answer. A
backend offers that through `answer_logprobs(prompts, answers)`: `embedded` from its full
next-token distribution, `openai`, `ollama` and `vllm` from the top 20 alternatives.
"""

from __future__ import annotations

import json
import math
from typing import Any

from shiftbench.core.progress import bar as progress_bar
from shiftbench.errors import InputError
from shiftbench.llm.backends import Backend, Generation
from shiftbench.llm.cache import GenerationCache, row_key

TOP_LOGPROBS = 20  # how many alternatives a server is asked for
SUPPORTED = "embedded, openai, ollama or vllm"


def spellings(answer: str) -> tuple[str, ...]:
    """The ways an answer word may begin a reply."""
    return tuple(dict.fromkeys((answer, " " + answer, answer.lower(), " " + answer.lower())))


def logsumexp(values: list[float]) -> float | None:
    if not values:
        return None
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def from_top_logprobs(top: dict[str, float], answers: tuple[str, ...]) -> dict[str, float | None]:
    """Each answer's log-probability from a server's {token: logprob} alternatives (None
    when no spelling of it is among them)."""
    return {a: logsumexp([lp for tok, lp in top.items() if tok in spellings(a)]) for a in answers}


def require_logprobs(backend: Backend, purpose: str) -> None:
    if not hasattr(backend, "answer_logprobs"):
        raise InputError(
            f"the {backend.name} backend does not expose log-probabilities; {purpose} "
            f"needs {SUPPORTED}"
        )


def ask(
    backend: Backend,
    prompts: list[str],
    answers: tuple[str, ...],
    cache: GenerationCache,
    *,
    quiet: bool = True,
    label: str = "",
) -> list[dict[str, float | None]]:
    """Per prompt, {answer: log-probability or None}; cached per (prompt, model, answers),
    each chunk stored as soon as the backend returns it."""
    model = backend.describe()["model"]
    keys = [
        row_key(
            kind="answer-logprobs",
            prompt=p,
            model=model,
            backend=backend.name,
            answers=list(answers),
        )
        for p in prompts
    ]
    found = {k: json.loads(g.text) for k, g in cache.get_many(list(set(keys))).items()}
    todo = list({k: p for k, p in zip(keys, prompts, strict=True) if k not in found}.items())
    # closed however the work ends, so an error starts a line of its own
    with progress_bar(len(todo), label, unit="pair", quiet=quiet) as bar:
        for start in range(0, len(todo), backend.chunk_size):
            chunk = todo[start : start + backend.chunk_size]
            scorer: Any = backend  # require_logprobs checked it has answer_logprobs
            made = scorer.answer_logprobs([p for _, p in chunk], answers)
            fresh = {k: a for (k, _), a in zip(chunk, made, strict=True)}
            cache.put_many({k: Generation(json.dumps(a), "logprobs") for k, a in fresh.items()})
            found.update(fresh)
            bar.update(len(chunk))
    return [found[k] for k in keys]
