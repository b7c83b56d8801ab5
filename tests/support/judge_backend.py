"""A judge for tests whose ratings are known in advance: word overlap of the two texts.

It reads the two texts out of the packaged judge and ParaPLUIE prompts and rates them by
the Jaccard overlap j of their lower-cased word sets: similarity "5j" (one decimal),
quality "Rating: 1 + 4j" (rounded), and log p(Yes) = log(j), log p(No) = log(1 - j)
(with a floor); asked for a rating scale's log-probabilities, it puts log p(k) =
-(k - 5j)^2 and leaves "5" out, as a server's top alternatives may. `replies` overrides
the reply for chosen outputs, so unparseable answers can be scripted.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar

from shiftbench.llm.backends import Generation, Request, Sampling

_PAIRS = (
    re.compile(r"Text A:\n(.*?)\n\nText B:\n(.*?)\n\n", re.S),
    re.compile(r"Original:\n(.*?)\n\nRewrite:\n(.*?)\n\n", re.S),
)
FLOOR = 1e-3


def texts(prompt: str) -> tuple[str, str]:
    for pattern in _PAIRS:
        match = pattern.search(prompt)
        if match:
            return match[1], match[2]
    raise AssertionError(f"not a judge prompt: {prompt[:80]!r}")


def jaccard(a: str, b: str) -> float:
    wa, wb = set(a.lower().split()), set(b.lower().split())
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def similarity(a: str, b: str) -> float:
    return round(5 * jaccard(a, b), 1)


def quality(a: str, b: str) -> int:
    return 1 + round(4 * jaccard(a, b))


def expected_similarity(a: str, b: str) -> float:
    """The expectation-scored similarity: weights exp(-(k - 5j)^2) for k = 0..4."""
    j = jaccard(a, b)
    weights = {k: math.exp(-((k - 5 * j) ** 2)) for k in range(5)}
    return round(sum(k * w for k, w in weights.items()) / sum(weights.values()), 4)


def paraplue(a: str, b: str) -> float:
    j = jaccard(a, b)
    return round(math.log(max(j, FLOOR)) - math.log(max(1 - j, FLOOR)), 4)


class JudgeBot:
    name = "judgebot"
    chunk_size = 3
    prompts: ClassVar[list[str]] = []
    replies: ClassVar[dict[str, str]] = {}  # output text -> reply to send instead

    def __init__(self, model: str | None = None, **_: Any) -> None:
        self.model = model or "judgebot-1"

    def load(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"model": {"id": self.model}, "backend": {"name": self.name}}

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: Any = None
    ) -> list[Generation]:
        assert sampling.temperature == 0.0, "judges decode greedily"
        out = []
        for r in requests:
            JudgeBot.prompts.append(r.prompt)
            a, b = texts(r.prompt)
            if b in self.replies:
                reply = self.replies[b]
            elif r.prompt.startswith("Read the two texts"):
                reply = f"{similarity(a, b):.1f}"
            else:
                reply = f"Rating: {quality(a, b)}"
            out.append(Generation(reply, "stop"))
        return out

    def answer_logprobs(
        self, prompts: list[str], answers: tuple[str, ...]
    ) -> list[dict[str, float | None]]:
        JudgeBot.prompts.extend(prompts)
        results: list[dict[str, float | None]] = []
        for prompt in prompts:
            j = jaccard(*texts(prompt))
            if answers == ("Yes", "No"):
                results.append({"Yes": math.log(max(j, FLOOR)), "No": math.log(max(1 - j, FLOOR))})
            else:  # a rating scale: mass around 5j, and "5" never among the top alternatives
                results.append(
                    {a: (None if a == "5" else -((int(a) - 5 * j) ** 2)) for a in answers}
                )
        return results
