"""A backend for scheduling tests: it serves many requests at once, like vLLM or a server.

Its answer is a pure function of the request (the input text, the language the prompt
asks for, and a digest of the prompt and the seed), so outputs reveal a request that was
sent with another seed or language than it should have been. It counts every request it
is sent, and can hold requests back until a condition over the requests seen so far holds
(with a deadline, after which the held call fails), to show which requests were in flight
together.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from shiftbench.llm.backends import Generation, Request, Sampling

DEADLINE = 20.0  # seconds a held call waits for its condition before it fails


class StreamBackend:
    name = "stream"
    chunk_size = 3
    concurrent: ClassVar[bool] = True
    requests: ClassVar[list[Request]] = []
    # hold(request, requests seen so far) -> True while the request must wait
    hold: ClassVar[Callable[[Request, list[Request]], bool] | None] = None
    fail_for: ClassVar[set[str]] = set()  # input texts whose requests fail
    held_too_long: ClassVar[list[str]] = []
    changed = threading.Condition()

    def __init__(self, model: str | None = None, **_: Any) -> None:
        self.model = model or "stream-model"

    def load(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"model": {"id": self.model}, "backend": {"name": self.name}}

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: Any = None
    ) -> list[Generation]:
        with self.changed:
            StreamBackend.requests.extend(requests)
            self.changed.notify_all()
            for request in requests:
                hold = StreamBackend.hold
                if hold is not None and not self.changed.wait_for(
                    lambda r=request, hold=hold: not hold(r, StreamBackend.requests), DEADLINE
                ):
                    StreamBackend.held_too_long.append(request.prompt)
                    raise TimeoutError("held past the deadline")
        results = []
        for i, request in enumerate(requests):
            text = input_text(request)
            if text in self.fail_for:
                raise ConnectionError(f"no answer for {text!r}")
            result = Generation(answer(request), "stop")
            results.append(result)
            if on_done is not None:
                on_done(i, result)
        return results


def input_text(request: Request) -> str:
    return request.prompt.rsplit("\n\n", 1)[-1].strip()


def asked_language(request: Request) -> str:
    """The language the prompt names ("... into German.", "... write it in English.")."""
    found = re.search(r"\b(?:into|in) ([A-Z][a-z]+)", request.prompt.split("\n", 1)[0])
    return found.group(1) if found else "?"


def answer(request: Request) -> str:
    digest = hashlib.sha256(f"{request.prompt}\x1f{request.seed}".encode()).hexdigest()[:6]
    return f"{input_text(request)} ({asked_language(request)} {digest})"
