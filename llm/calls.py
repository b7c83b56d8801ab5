"""Calling a backend: retries of the requests still missing."""

from __future__ import annotations

import time

from shiftbench.errors import CacheLocked, InputError, RuntimeFault
from shiftbench.llm.backends import Backend, Generation, OnDone, Request, Sampling

BACKEND_TRIES = 3


CACHED = "finished rows are cached"
NOT_CACHED = "nothing is kept (--no-cache)"


def call_backend(
    backend: Backend,
    requests: list[Request],
    sampling: Sampling,
    keep: OnDone,
    kept: str = CACHED,
) -> None:
    """Complete every request, passing each result to `keep` exactly once.

    A failed call is retried with only the requests whose results have not come in yet.
    A failure for good says what became of the finished results: `kept`.
    """
    done: set[int] = set()

    def keep_once(index: int, gen: Generation) -> None:
        if index not in done:
            done.add(index)
            keep(index, gen)

    for attempt in range(1, BACKEND_TRIES + 1):
        todo = [i for i in range(len(requests)) if i not in done]

        def report(j: int, gen: Generation, todo: list[int] = todo) -> None:
            keep_once(todo[j], gen)

        try:
            made = backend.generate([requests[i] for i in todo], sampling, report)
            for j, gen in enumerate(made):  # for backends that do not report as they go
                keep_once(todo[j], gen)
            return
        except (InputError, CacheLocked):
            raise
        except RuntimeFault as exc:  # the backend has done its own retrying
            raise RuntimeFault(f"{exc}; {kept}") from exc
        except Exception as exc:  # any other backend failure is retried, then reported
            if attempt == BACKEND_TRIES:
                raise RuntimeFault(
                    f"backend {backend.name} failed {BACKEND_TRIES} times; "
                    f"{kept} ({type(exc).__name__}: {exc})"
                ) from exc
            time.sleep(0.5 * 2 ** (attempt - 1))
