"""A backend for engine tests whose answers are known in advance.

It echoes the input text with a marker, can answer empty for chosen texts, can report
every answer to chosen texts as cut at its token budget (finish reason "length"), and can
fail from its n-th call on, so crash and retry behaviour can be asserted exactly.
"""

from __future__ import annotations

from typing import Any, ClassVar

from shiftbench.llm.backends import Generation, Request, Sampling


class ScriptedBackend:
    name = "scripted"
    chunk_size = 2  # small, so crash tests can stop a run between chunks
    calls: ClassVar[list[list[str]]] = []
    prompts: ClassVar[list[str]] = []
    fail_from_call: ClassVar[int | None] = None
    # report this many results of the next call, then fail that call once
    fail_once_after: ClassVar[int | None] = None
    empty_for: ClassVar[set[str]] = set()
    length_for: ClassVar[set[str]] = set()  # inputs whose every answer is cut at its budget
    budgets: ClassVar[list[tuple[str, int | None]]] = []  # (input, token budget) per request
    seeds: ClassVar[list[tuple[str, int]]] = []  # (input, seed) per request
    samplings: ClassVar[list[Sampling]] = []  # the sampling of each call
    script: ClassVar[dict[str, list[str]]] = {}  # input -> replies, one per call, in order

    def __init__(self, model: str | None = None, **_: Any) -> None:
        self.model = model or "scripted-model"

    def load(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"model": {"id": self.model}, "backend": {"name": self.name}}

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: Any = None
    ) -> list[Generation]:
        texts = [r.prompt.rsplit("\n\n", 1)[-1].strip() for r in requests]
        ScriptedBackend.calls.append(texts)
        ScriptedBackend.prompts.extend(r.prompt for r in requests)
        ScriptedBackend.samplings.append(sampling)
        ScriptedBackend.budgets.extend(
            (t, r.max_new_tokens) for t, r in zip(texts, requests, strict=True)
        )
        ScriptedBackend.seeds.extend((t, r.seed) for t, r in zip(texts, requests, strict=True))
        if self.fail_from_call is not None and len(self.calls) >= self.fail_from_call:
            raise ConnectionError("scripted failure")
        if self.fail_once_after is not None:
            for i, text in enumerate(texts[: self.fail_once_after]):
                on_done(i, Generation(self._reply(text), self._finish(text)))
            ScriptedBackend.fail_once_after = None
            raise ConnectionError("scripted failure mid-call")
        return [Generation(self._reply(t), self._finish(t)) for t in texts]

    def _finish(self, text: str) -> str:
        return "length" if text in self.length_for else "stop"

    def _reply(self, text: str) -> str:
        if self.script.get(text):
            return self.script[text].pop(0)
        if self.model == "halves":  # a generator that drops the second half of each text
            words = text.split()
            return " ".join(words[: max(1, len(words) // 2)])
        return "" if text in self.empty_for else f"REWRITTEN {text}"
