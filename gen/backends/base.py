"""What every generation backend takes and returns."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from typing import Any, Protocol, TypeVar

from shiftbench.errors import RuntimeFault

T = TypeVar("T")


@dataclass(frozen=True)
class Sampling:
    """Sampling settings; temperature 0 means greedy decoding.

    A temperature or top_p of None is not sent: the backend (or its server) uses its own
    default, which samples. `max_new_tokens` is the cap on every request's own budget: it
    replaces the transform's cap, lower or higher; None keeps the transform's cap.
    """

    temperature: float | None = 0.7
    top_p: float | None = 0.95
    max_new_tokens: int | None = None

    @property
    def sampled(self) -> bool:
        """Whether outputs are drawn at random (so a new seed can give a new output)."""
        return self.temperature is None or self.temperature > 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sent(self) -> dict[str, float]:
        """The temperature and top_p to send, leaving out those the backend chooses."""
        values = {"temperature": self.temperature, "top_p": self.top_p}
        return {k: v for k, v in values.items() if v is not None}


@dataclass(frozen=True)
class Request:
    """One prompt to complete. `seed` alone decides the random draws for this prompt.

    `max_new_tokens` is this prompt's own budget (at most the sampling cap); a backend
    that batches must cut each output at its own budget, never at a batch-wide one.
    """

    prompt: str
    seed: int
    max_new_tokens: int | None = None

    @property
    def messages(self) -> list[dict[str, str]]:
        """The prompt as a chat: one user turn."""
        return [{"role": "user", "content": self.prompt}]


@dataclass(frozen=True)
class Generation:
    """A completion and why it stopped: "stop" (end of text) or "length" (token budget).

    Token counts and latency are reported where the backend knows them.
    """

    text: str
    finish_reason: str
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    latency: float | None = None


DEFAULT_MAX_NEW_TOKENS = 512  # for a request that names no budget of its own


def token_budget(request: Request, sampling: Sampling) -> int:
    """The tokens a request may produce: its own budget under the sampling-wide cap."""
    caps = [c for c in (request.max_new_tokens, sampling.max_new_tokens) if c]
    return min(caps) if caps else DEFAULT_MAX_NEW_TOKENS


class Backend(Protocol):
    name: str
    chunk_size: int  # requests the caller hands over at once (results still come one by one)

    def load(self) -> None:
        """Check the model is there (a one-line InputError if not) and get it ready."""

    def describe(self) -> dict[str, Any]:
        """Model id, revision or digest, and library versions, for provenance."""

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: OnDone | None = None
    ) -> list[Generation]:
        """Complete every request; the i-th result answers the i-th request.

        `on_done(i, result)` is called as soon as each result is in (from the calling
        thread), so the caller can keep it before the rest are finished.
        """


OnDone = Callable[[int, Generation], None]


def complete_concurrently(
    complete: Callable[[Request], Generation],
    requests: list[Request],
    concurrency: int,
    on_done: OnDone | None = None,
) -> list[Generation]:
    """Run `complete` over the requests with `concurrency` threads, reporting each result.

    On the first failure, requests not yet started are dropped and the failure is raised
    once the ones in flight are done.
    """
    results: list[Generation | None] = [None] * len(requests)
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures = {pool.submit(complete, r): i for i, r in enumerate(requests)}
        try:
            for future in as_completed(futures):
                index = futures[future]
                result = future.result()
                results[index] = result
                if on_done is not None:
                    on_done(index, result)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return [r for r in results if r is not None]


class TransientError(Exception):
    """A fault worth retrying: the same request may well succeed in a moment."""


def retry_transient(call: Callable[[], T], tries: int, backoff: float, where: str) -> T:
    """`call()`, tried again after each TransientError with exponential backoff."""
    for attempt in range(1, tries + 1):
        try:
            return call()
        except TransientError as exc:
            if attempt == tries:
                raise RuntimeFault(f"{where} kept failing ({exc}) after {tries} tries") from None
            time.sleep(backoff * 2 ** (attempt - 1))
    raise AssertionError("unreachable")
