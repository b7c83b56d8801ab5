"""A ParaPLUIE-style paraphrase score: how much more an LLM expects "Yes" than "No".

The model reads our yes/no question (do texts A and B say the same thing?) and, at the
first token of its answer, the score is log p(Yes) - log p(No): positive means the model
takes B for a paraphrase of A, and its size says how sure it is. Nothing is generated,
so the score has no parsing failures and no sampling; it needs a backend that exposes
next-token log-probabilities: `embedded` (exact, from the full distribution), `openai` and
`ollama` (from the server's top log-probabilities; an answer outside them leaves the pair
unscored). Each answer's probability sums the spellings "Yes", " Yes", "yes"
and " yes" (likewise for No) that are single tokens.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from typing import Any

from shiftbench.errors import InputError
from shiftbench.gen.backends import Backend, Generation
from shiftbench.gen.cache import GenerationCache, row_key
from shiftbench.validate.judge import Item, prompt_template, render

ANSWERS = ("Yes", "No")
PROMPT_FILE = "paraplue.txt"
TOP_LOGPROBS = 20  # how many alternatives a server is asked for


def spellings(answer: str) -> tuple[str, ...]:
    """The ways an answer word may begin a reply."""
    return tuple(dict.fromkeys((answer, " " + answer, answer.lower(), " " + answer.lower())))


def logsumexp(values: list[float]) -> float | None:
    if not values:
        return None
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def from_top_logprobs(top: dict[str, float], answers: tuple[str, ...]) -> dict[str, float | None]:
    """Each answer's log-probability from a server's {token: logprob} alternatives."""
    return {a: logsumexp([lp for tok, lp in top.items() if tok in spellings(a)]) for a in answers}


class Paraplue:
    """log p(Yes) - log p(No) for every (original, output) pair, from one backend's model."""

    def __init__(self, backend: Backend) -> None:
        if not hasattr(backend, "answer_logprobs"):
            raise InputError(
                f"the {backend.name} backend does not expose log-probabilities; ParaPLUIE "
                "needs embedded, openai or ollama"
            )
        self.backend = backend
        self.template = prompt_template(PROMPT_FILE)
        model = backend.describe()["model"]
        self.model = model
        self.key = f"paraplue:{backend.name}:{model['id']}"

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "paraplue",
            "answers": list(ANSWERS),
            "prompt_sha256": hashlib.sha256(self.template.encode("utf-8")).hexdigest(),
            **self.backend.describe(),
        }

    def score(
        self, items: list[Item], cache: GenerationCache, *, quiet: bool = True, label: str = ""
    ) -> list[tuple[float | None, str | None, str | None]]:
        """(log-likelihood ratio, None, why there is none) per item, rounded to 4 decimals."""
        prompts = [render(self.template, original=i.original, output=i.output) for i in items]
        keys = [
            row_key(
                kind="paraplue",
                prompt=p,
                model=self.model,
                backend=self.backend.name,
                answers=list(ANSWERS),
            )
            for p in prompts
        ]
        found = {k: json.loads(g.text) for k, g in cache.get_many(list(set(keys))).items()}
        todo = list({k: p for k, p in zip(keys, prompts, strict=True) if k not in found}.items())
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc=label or self.key, unit="pair", file=sys.stderr,
                   disable=quiet or not todo, dynamic_ncols=True)  # fmt: skip
        size = self.backend.chunk_size
        for start in range(0, len(todo), size):
            chunk = todo[start : start + size]
            answers = self.backend.answer_logprobs([p for _, p in chunk], ANSWERS)
            made = {k: a for (k, _), a in zip(chunk, answers, strict=True)}
            cache.put_many({k: Generation(json.dumps(a), "logprobs") for k, a in made.items()})
            found.update(made)
            bar.update(len(chunk))
        bar.close()
        values: list[tuple[float | None, str | None, str | None]] = []
        for key in keys:
            yes, no = (found[key].get(a) for a in ANSWERS)
            if yes is None or no is None:
                values.append((None, None, "answer not among the top log-probabilities"))
            else:
                values.append((round(yes - no, 4), None, None))
        return values
