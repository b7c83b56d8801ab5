"""A ParaPLUIE-style paraphrase score: how much more an LLM expects "Yes" than "No".

The model reads our yes/no question (do texts A and B say the same thing?) and, at the
first token of its answer, the score is log p(Yes) - log p(No): positive means the model
takes B for a paraphrase of A, and its size says how sure it is. Nothing is generated,
so the score has no parsing failures and no sampling; it needs a backend that exposes
next-token log-probabilities: `embedded` (exact, from the full distribution), `openai`,
`ollama` and `vllm` (from the top 20 log-probabilities; an answer outside them leaves the
pair unscored). Each answer's probability sums the spellings "Yes", " Yes", "yes"
and " yes" (likewise for No) that are single tokens.
"""

from __future__ import annotations

import hashlib

from shiftbench.llm.backends import Backend
from shiftbench.llm.cache import GenerationCache
from shiftbench.llm.logprobs import ask, require_logprobs
from shiftbench.validate.judge import Item, prompt_template, render

ANSWERS = ("Yes", "No")
PROMPT_FILE = "paraplue.txt"


class Paraplue:
    """log p(Yes) - log p(No) for every (original, output) pair, from one backend's model."""

    def __init__(self, backend: Backend) -> None:
        require_logprobs(backend, "ParaPLUIE")
        self.backend = backend
        self.template = prompt_template(PROMPT_FILE)
        model = backend.describe()["model"]
        self.model = model
        self.key = f"paraplue:{backend.name}:{model['id']}"

    def describe(self) -> dict[str, object]:
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
        found = ask(self.backend, prompts, ANSWERS, cache, quiet=quiet, label=label or self.key)
        values: list[tuple[float | None, str | None, str | None]] = []
        for answer in found:
            yes, no = (answer.get(a) for a in ANSWERS)
            if yes is None or no is None:
                values.append((None, None, "answer not among the top log-probabilities"))
            else:
                values.append((round(yes - no, 4), None, None))
        return values
