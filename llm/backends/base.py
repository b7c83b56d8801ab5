"""What every generation backend takes and returns."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed, wait
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Protocol, TypeVar, cast

from shiftbench.core.records import BackendDescription, SamplingRecord
from shiftbench.core.text.transforms import GROWN
from shiftbench.errors import RuntimeFault

T = TypeVar("T")


@dataclass(frozen=True)
class Sampling:
    """Sampling settings; temperature 0 means greedy decoding.

    A temperature, top_p or top_k of None is not sent: the backend (or its server) uses its
    own default, which samples. `max_new_tokens` is the cap on every request's own budget:
    it replaces the transform's cap, lower or higher; None keeps the transform's cap.
    `budgets`: "grown" (each call's budget grows with its input, up to the cap) or "flat"
    (every call of a step gets the step's flat budget, as HTEB's release gives it).
    """

    temperature: float | None = 0.7
    top_p: float | None = 0.95
    max_new_tokens: int | None = None
    top_k: int | None = None
    budgets: str = GROWN
    # whether a variant with these settings sends HTEB's requests (gen/hteb_requests.py)
    hteb: ClassVar[bool] = False

    @property
    def sampled(self) -> bool:
        """Whether outputs are drawn at random (so a new seed can give a new output)."""
        return self.temperature is None or self.temperature > 0

    def as_dict(self) -> SamplingRecord:
        """Every setting, the later ones only where they differ from their default (so
        settings made before they existed keep their cache keys and hashes)."""
        out = asdict(self)
        if self.top_k is None:
            del out["top_k"]
        if self.budgets == GROWN:
            del out["budgets"]
        return cast(SamplingRecord, out)

    def sent(self) -> dict[str, float]:
        """The temperature, top_p and top_k to send, leaving out those the backend
        chooses."""
        values = {"temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k}
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

    Token counts and latency are reported where the backend knows them. Trailing U+FFFD
    characters are dropped from `text`: they are what decoding makes of a multibyte
    character cut by the token budget, never part of the answer. A lone surrogate (half
    of a pair a server escaped as `\\ud83d` in its JSON, the same cut) becomes U+FFFD
    first: it is no character, and no file, cache or tokenizer takes it.
    """

    text: str
    finish_reason: str
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    latency: float | None = None

    def __post_init__(self) -> None:
        if LONE.search(self.text):
            text = self.text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            object.__setattr__(self, "text", text)
        if self.text.endswith(BROKEN):
            object.__setattr__(self, "text", self.text.rstrip(BROKEN).rstrip())


BROKEN = "\ufffd"  # the replacement character a cut UTF-8 sequence decodes to
LONE = re.compile("[\ud800-\udfff]")  # surrogates: a pair is joined, a lone one replaced


# The embedded backend's engines: "auto" picks llama.cpp for a GGUF file when
# llama-cpp-python is installed, else transformers (llm/backends/embedded.py).
EMBEDDED_ENGINES = ("auto", "transformers", "llama.cpp")

DEFAULT_MAX_NEW_TOKENS = 512  # for a request that names no budget of its own


def token_budget(request: Request, sampling: Sampling) -> int:
    """The tokens a request may produce: its own budget under the sampling-wide cap."""
    caps = [c for c in (request.max_new_tokens, sampling.max_new_tokens) if c]
    return min(caps) if caps else DEFAULT_MAX_NEW_TOKENS


class Backend(Protocol):
    name: str
    chunk_size: int  # requests the caller hands over at once (results still come one by one)
    # Backends that serve many requests at once also set `concurrent = True`: their
    # generate() may then be called from several threads at the same time, and an optional
    # abort() drops every request queued (gen/schedule.py).

    def load(self) -> None:
        """Check the model is there (a one-line InputError if not) and get it ready."""

    def describe(self) -> BackendDescription:
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
    pool: RequestPool | None = None,
) -> list[Generation]:
    """Run `complete` over the requests with `concurrency` threads, reporting each result.

    With `pool`, the requests join the pool's queue instead, which callers in several
    threads share, so at most the pool's `concurrency` requests are in flight in all.
    On the first failure, requests not yet started are dropped and the failure is raised
    once the ones in flight are done. An interrupt (Ctrl-C, or the command line's SIGTERM)
    drops them too but is raised at once: a request in flight may wait on its server for
    minutes, and nothing it brings is kept after the caller has stopped.
    """
    if pool is None:
        with RequestPool(concurrency) as own:
            return complete_concurrently(complete, requests, concurrency, on_done, own)
    results: list[Generation | None] = [None] * len(requests)
    futures = {pool.submit(complete, r): i for i, r in enumerate(requests)}
    try:
        for future in as_completed(futures):
            index = futures[future]
            result = future.result()
            results[index] = result
            if on_done is not None:
                on_done(index, result)
    except BaseException as exc:
        for future in futures:
            future.cancel()
        if not interrupt(exc):
            wait(futures)
        raise
    return [r for r in results if r is not None]


class Stopped(RuntimeFault):
    """A request or job dropped before it ran because the run is stopping: another job of
    the run failed, or the caller aborted the backend's queue (its message says which)."""


def interrupt(exc: BaseException) -> bool:
    """Whether `exc` stops the program rather than reports a failure: Ctrl-C's
    KeyboardInterrupt, a SystemExit, or the exception the command line turns SIGTERM into
    (every BaseException that is no Exception)."""
    return not isinstance(exc, Exception)


class RequestPool:
    """Threads that complete requests for any number of callers, `concurrency` at a time;
    `abort()` drops every request not yet started (its caller sees CancelledError)."""

    def __init__(self, concurrency: int) -> None:
        self._executor = ThreadPoolExecutor(concurrency, thread_name_prefix="shiftbench-request")
        self._queued: set[Future[Any]] = set()
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[Request], Generation], request: Request) -> Future[Generation]:
        future = self._executor.submit(fn, request)
        with self._lock:
            self._queued.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._queued.discard(future)

    def abort(self) -> None:
        with self._lock:
            queued = list(self._queued)
        for future in queued:
            future.cancel()

    def __enter__(self) -> RequestPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _: Any) -> None:
        # after an interrupt, threads still waiting on a server are left to their deadline
        stopped = exc is not None and interrupt(exc)
        self._executor.shutdown(wait=not stopped, cancel_futures=stopped)


class SharedRequests:
    """For a server backend with `concurrency` slots: one RequestPool for every job of a
    run, so at most `concurrency` requests are in flight whichever job sends them."""

    concurrency: int
    _pool: RequestPool | None = None
    _pool_lock = threading.Lock()  # guards the pool's creation, across instances too

    @property
    def concurrent(self) -> bool:
        """Several requests at once: gen sends every job's requests into one shared pool."""
        return self.concurrency > 1

    def _requests(self) -> RequestPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = RequestPool(self.concurrency)
            return self._pool

    def abort(self) -> None:
        """Drop the requests not yet sent."""
        if self._pool is not None:
            self._pool.abort()
