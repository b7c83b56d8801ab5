"""One continuously fed vLLM engine for requests from any number of threads.

A single thread owns the engine: between two engine steps it adds the requests callers
have handed in since, so requests of many jobs share the engine's batches and the engine
never waits for one caller's last request before taking the next caller's first. Each
caller gets its own results, as they finish, in its own thread.
"""

from __future__ import annotations

import contextlib
import operator
import queue
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from shiftbench.core.messages import counted
from shiftbench.errors import RuntimeFault
from shiftbench.llm.backends.base import Stopped

ADD, ABORT, ABORT_ALL = "add", "abort", "abort-all"


class _Batch:
    """One caller's requests and the queue its results (or its failure) come back on."""

    def __init__(self, prompts: list[list[int]], params: list[Any]) -> None:
        self.prompts = prompts
        self.params = params
        self.results: queue.SimpleQueue[tuple[int, Any] | BaseException] = queue.SimpleQueue()


class EngineStream:
    """Feeds `llm` (a `vllm.LLM`) from one thread; see the module docstring."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm
        self._inbox: queue.SimpleQueue[tuple[str, _Batch | None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(
        self,
        prompts: list[list[int]],
        params: list[Any],
        on_output: Callable[[int, Any], None],
    ) -> None:
        """Add the requests (token ids, SamplingParams) and pass each finished vLLM output
        to `on_output(index, output)` in the calling thread, until all are in."""
        if not prompts:
            return
        batch = _Batch(prompts, params)
        self._start()
        self._inbox.put((ADD, batch))
        try:
            for _ in range(len(prompts)):
                item = batch.results.get()
                if isinstance(item, BaseException):
                    raise item
                on_output(*item)
        except BaseException:
            self._inbox.put((ABORT, batch))  # the caller is gone: drop what it still waits for
            raise

    def abort_all(self) -> None:
        """Drop every request in the engine; their callers get a Stopped error."""
        if self._thread is not None:
            self._inbox.put((ABORT_ALL, None))

    def _start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._drive, name="shiftbench-vllm", daemon=True
                )
                self._thread.start()

    # -- the engine's thread -------------------------------------------------------------

    def _drive(self) -> None:
        engine = self.llm.llm_engine
        owners: dict[str, tuple[_Batch, int]] = {}  # engine request id -> (batch, index)
        # enqueue() returns the engine's internal ids ("7-1a2b3c4d"); finished outputs
        # carry the caller-facing part ("7"). Either finds the request.
        aliases: dict[str, str] = {}
        while True:
            try:
                idle = not owners and not engine.has_unfinished_requests()
                for kind, batch in self._messages(block=idle):
                    if kind == ADD:
                        assert batch is not None
                        self._add(batch, owners, aliases)
                    elif kind == ABORT:
                        self._drop(engine, owners, partial(operator.is_, batch), None)
                    else:
                        error = Stopped("stopped: the vllm engine dropped the queued requests")
                        self._drop(engine, owners, lambda b: True, error)
                if engine.has_unfinished_requests():
                    for out in engine.step():
                        rid = out.request_id
                        rid = rid if rid in owners else aliases.get(rid, rid)
                        if out.finished and rid in owners:
                            aliases.pop(rid.split("-", 1)[0], None)
                            batch, index = owners.pop(rid)
                            batch.results.put((index, out))
                elif owners:
                    lost = RuntimeFault(
                        f"vllm returned no output for {counted(len(owners), 'request')} it "
                        "was given"
                    )
                    self._drop(engine, owners, lambda b: True, lost)
                if not owners:
                    aliases.clear()
            except BaseException as exc:  # the engine failed: every waiting caller hears it
                self._drop(engine, owners, lambda b: True, exc)

    def _messages(self, block: bool) -> list[tuple[str, _Batch | None]]:
        messages = [self._inbox.get()] if block else []
        with contextlib.suppress(queue.Empty):
            while True:
                messages.append(self._inbox.get_nowait())
        return messages

    def _add(
        self, batch: _Batch, owners: dict[str, tuple[_Batch, int]], aliases: dict[str, str]
    ) -> None:
        try:
            ids = self.llm.enqueue(
                [{"prompt_token_ids": ids} for ids in batch.prompts], batch.params, use_tqdm=False
            )
        except BaseException as exc:
            batch.results.put(exc)
            return
        for i, rid in enumerate(ids):
            owners[rid] = (batch, i)
            aliases[rid.split("-", 1)[0]] = rid

    @staticmethod
    def _drop(
        engine: Any,
        owners: dict[str, tuple[_Batch, int]],
        which: Callable[[_Batch], bool],
        error: BaseException | None,
    ) -> None:
        """Abort the requests of the batches `which` picks; tell their callers `error`."""
        gone = {rid: owner for rid, owner in owners.items() if which(owner[0])}
        for rid in gone:
            del owners[rid]
        # The engine itself may be gone; the error the callers hear is the one to report.
        with contextlib.suppress(Exception):
            engine.abort_request(list(gone), internal=True)
        if error is not None:
            for batch in {id(b): b for b, _ in gone.values()}.values():
                batch.results.put(error)
