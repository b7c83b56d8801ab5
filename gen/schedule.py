"""How a run's generation jobs (one per subset and variant) reach the backend.

A backend that serves many requests at once (`concurrent`: vllm, and openai or ollama with
--concurrency above 1) gets every job at the same time, each from its own thread, so the
requests of all variants and seeds form one stream and the engine never drains between
variants: each job's second step and retries follow as soon as its own inputs are ready,
while the other jobs keep the engine fed. Any other backend runs the jobs one after
another, in order, as they are submitted.

Nothing about a row depends on this: each request carries its own seed, each result is
committed to the cache as it arrives, and jobs that need the same call (greedy decoding
over several seeds) make it once (llm/cache.py). On the first failure the other jobs stop:
their queued requests are dropped, and the failure is raised once they have stopped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, Generic, TypeVar

from shiftbench.llm.backends import Backend, Generation, OnDone, Request, Sampling
from shiftbench.llm.backends.base import Stopped

T = TypeVar("T")
MAX_JOBS = 32  # jobs in flight at once; the next one starts as soon as one ends


def streams(backend: Backend | None) -> bool:
    """Whether the backend takes requests from several threads into one stream."""
    return bool(getattr(backend, "concurrent", False))


class Jobs(Generic[T]):
    """Runs jobs `job(backend) -> T`, together or one by one (see the module docstring).

    `count` is the number of jobs to come; one job alone runs in the calling thread.
    """

    def __init__(self, backend: Backend | None, count: int) -> None:
        self.backend = backend
        self.together = backend is not None and streams(backend) and count > 1
        self._stop = threading.Event()
        self._pool = (
            ThreadPoolExecutor(min(count, MAX_JOBS), thread_name_prefix="shiftbench-job")
            if self.together
            else None
        )
        self._guarded = _Guarded(backend, self._stop) if backend is not None else None
        self._failures: list[BaseException] = []  # in the order they happened
        self._lock = threading.Lock()

    def submit(self, job: Callable[[Any], T]) -> Future[T]:
        """Start `job` with the backend; run at once unless the jobs run together."""
        if self._pool is None:
            done: Future[T] = Future()
            done.set_result(job(self.backend))
            return done
        return self._pool.submit(self._run, job)

    def _run(self, job: Callable[[Any], T]) -> T:
        try:
            return job(self._guarded)
        except BaseException as exc:
            with self._lock:
                self._failures.append(exc)
            raise

    def gather(self, items: list[T | Future[T]]) -> list[T]:
        """The items with every job's result in its place; the first failure is raised
        after the other jobs have stopped."""
        futures = [i for i in items if isinstance(i, Future)]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)
            failed = [f for f in futures if f.done() and f.exception() is not None]
            if failed:
                self.stop()
                wait(futures)
        except BaseException:  # an interrupt while waiting: stop the jobs, then re-raise
            self.stop()
            raise
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
        if self._failures:
            raise self._failures[0]  # the first to happen; the others followed from it
        return [i.result() if isinstance(i, Future) else i for i in items]

    def stop(self) -> None:
        """Stop every job: no new requests, and the backend drops the ones queued."""
        self._stop.set()
        abort = getattr(self.backend, "abort", None)
        if abort is not None:
            abort()


class _Guarded:
    """The backend as the jobs see it: it refuses new requests once the run stops."""

    def __init__(self, backend: Backend, stop: threading.Event) -> None:
        self._backend = backend
        self._stop = stop

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: OnDone | None = None
    ) -> list[Generation]:
        if self._stop.is_set():
            raise Stopped("stopped: another job of the run failed")
        return self._backend.generate(requests, sampling, on_done)
