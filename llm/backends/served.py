"""What the backends of a chat server reached over HTTP share (llm/backends/ollama.py,
llm/backends/openai.py): the settings every one takes, a call retried on transient
faults, and the fanning out of requests and of log-probability questions over the
server's slots."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, ClassVar

from shiftbench.core.retries import default_timeout, retry_transient
from shiftbench.errors import InputError, shown_url
from shiftbench.llm.backends.base import (
    Generation,
    OnDone,
    Request,
    Sampling,
    SharedRequests,
    complete_concurrently,
)
from shiftbench.llm.logprobs import from_top_logprobs


class ServedBackend(SharedRequests):
    """A model served over HTTP, several requests at a time. A subclass names what it
    needs (`UNNAMED`: the message for a missing model; `URL_ENV` and `DEFAULT_URL`: where
    the server is; `WAITED`: the seconds a request waits by default), checks the server in
    `load`, says in `_loaded` whether that is done, answers one request in `_complete` and
    one log-probability question in `_first_token`, and names the server in `_where` (how
    retry messages name it)."""

    chunk_size = 64
    BACKOFF = 0.5  # seconds before the first retry; doubles each time
    UNNAMED: ClassVar[str]
    URL_ENV: ClassVar[str]
    DEFAULT_URL: ClassVar[str]
    WAITED: ClassVar[float]

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        concurrency: int = 4,
        timeout: float | None = None,
        tries: int = 5,
        **_: Any,
    ) -> None:
        if not model:
            raise InputError(self.UNNAMED)
        self.model = model
        url = (base_url or os.environ.get(self.URL_ENV) or self.DEFAULT_URL).rstrip("/")
        self._url = url  # with any credentials, for the connection alone
        self.shown = shown_url(url)  # as printed and recorded
        self.concurrency = concurrency
        self.timeout = timeout or default_timeout(self.WAITED)
        self.tries = tries
        self._client: Any = None

    def load(self) -> None:
        raise NotImplementedError

    def _loaded(self) -> bool:
        raise NotImplementedError

    def _where(self) -> str:
        raise NotImplementedError

    def _complete(self, request: Request, sampling: Sampling) -> Generation:
        raise NotImplementedError

    def _first_token(self, request: Request) -> Generation:
        """The first reply token's alternatives, as JSON {token: logprob} in `text`."""
        raise NotImplementedError

    def _retried(self, call: Callable[[], Generation]) -> Generation:
        return retry_transient(call, self.tries, self.BACKOFF, self._where())

    def generate(
        self, requests: list[Request], sampling: Sampling, on_done: OnDone | None = None
    ) -> list[Generation]:
        if not self._loaded():
            self.load()
        return complete_concurrently(
            lambda r: self._complete(r, sampling), requests, self.concurrency, on_done,
            self._requests(),
        )  # fmt: skip

    def answer_logprobs(
        self, prompts: list[str], answers: tuple[str, ...]
    ) -> list[dict[str, float | None]]:
        """Per prompt, each answer word's log-probability as the reply's first token, from
        the server's top log-probabilities (None when the word is not among them)."""
        if not self._loaded():
            self.load()
        made = complete_concurrently(
            self._first_token, [Request(p, 0) for p in prompts], self.concurrency
        )
        return [from_top_logprobs(json.loads(g.text), answers) for g in made]
