"""Encoders behind an OpenAI-compatible embeddings endpoint (`--model openai:NAME@URL`).

`EmbeddingsEndpoint` looks like a sentence-transformers model to the evaluators: `encode`
returns a float32 array (one row per text, in order), and `similarity` and
`similarity_pairwise` are the cosine, since an endpoint names no similarity of its own.
Texts go out in batches of `batch_size` as `POST <url>/embeddings` with `{"model",
"input", "encoding_format": "float"}` plus any `--encode-kwarg` (e.g. `dimensions`); a
prompt is put before each text, as sentence-transformers does. Transient faults
(connection errors, timeouts, HTTP 429 and 5xx, malformed bodies) are retried with
exponential backoff. The API key, if any, is read from $OPENAI_API_KEY and only ever sent
in the Authorization header; it is never recorded.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

import numpy as np

from shiftbench.core.messages import counted
from shiftbench.core.retries import (
    TransientError,
    default_timeout,
    http_timeout,
    post_json,
    retry_transient,
    unanswered,
)
from shiftbench.errors import InputError, RuntimeFault, shown_url

PREFIX = "openai:"
DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
DEFAULT_TIMEOUT = 300.0  # seconds one request may wait for its answer (SHIFTBENCH_HTTP_TIMEOUT)
API_KEY_ENV = "OPENAI_API_KEY"


def parse_endpoint(spec: str) -> tuple[str, str]:
    """(model name, base URL) of `openai:NAME[@URL]`; the URL defaults to
    $OPENAI_BASE_URL, then http://127.0.0.1:8000/v1."""
    rest = spec[len(PREFIX) :]
    name, at, url = rest.partition("@")
    if not name:
        raise InputError(f"{spec!r} names no model: openai:NAME[@URL]")
    if at and not url.startswith(("http://", "https://")):
        raise InputError(f"{spec!r}: the URL after @ must start with http:// or https://")
    base = url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    return name, base.rstrip("/")


def shown_spec(spec: str) -> str:
    """An encoder spec as it may be printed or recorded: an endpoint's URL without its
    credentials (errors.shown_url); any other spec as it is."""
    if not spec.startswith(PREFIX):
        return spec
    name, at, url = spec[len(PREFIX) :].partition("@")
    return f"{PREFIX}{name}@{shown_url(url)}" if at else spec


class EmbeddingsEndpoint:
    """A model served at an OpenAI-compatible /embeddings endpoint."""

    similarity_fn_name = "cosine"
    BACKOFF = 0.5  # seconds before the first retry; doubles each time

    def __init__(
        self,
        name: str,
        base_url: str,
        *,
        extra: dict[str, object] | None = None,
        timeout: float | None = None,
        tries: int = 5,
    ) -> None:
        import httpx

        self.name = name
        self.base_url = shown_url(base_url)  # as printed and recorded
        self.extra = dict(extra or {})
        self.tries = tries
        headers = {}
        key = os.environ.get(API_KEY_ENV)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.timeout = timeout or default_timeout(DEFAULT_TIMEOUT)
        self._http = httpx.Client(
            base_url=base_url, headers=headers, timeout=http_timeout(self.timeout)
        )
        self.dimension: int | None = None
        self.prompts: dict[str, str] = {}  # an endpoint names no prompts of its own

    def check(self) -> None:
        """The server answers, serves the model (when it lists models), and embeds a text;
        a wrong URL, key or name is an InputError."""
        import httpx

        try:
            response = self._http.get("/models")
        except httpx.TimeoutException as exc:
            if not isinstance(exc, httpx.ConnectTimeout):
                asked = f"GET {self._http.base_url.path.rstrip('/')}/models"
                where = f"the embeddings endpoint at {self.base_url}"
                raise unanswered(where, asked, self.timeout) from None
            raise self._unreachable() from None
        except httpx.TransportError:
            raise self._unreachable() from None
        if response.status_code == 401:
            raise InputError(f"the server at {self.base_url} refused the API key (${API_KEY_ENV})")
        if response.status_code == 200:
            try:
                served = [m["id"] for m in response.json().get("data", [])]
            except (ValueError, KeyError, TypeError, AttributeError):
                served = []
            if served and self.name not in served:
                raise InputError(
                    f"the server at {self.base_url} does not serve {self.name!r}; it serves "
                    f"{', '.join(served)}"
                )
        try:
            self.encode(["shiftbench"])
        except RuntimeFault as exc:
            raise InputError(f"{self.base_url} cannot embed with {self.name!r}: {exc}") from None

    def _unreachable(self) -> InputError:
        return InputError(
            f"cannot reach an embeddings endpoint at {self.base_url} (the URL in openai:NAME@URL)"
        )

    def encode(
        self,
        sentences: list[str],
        prompt: str | None = None,
        batch_size: int = 32,
        convert_to_numpy: bool = True,
        show_progress_bar: bool = False,
        **_: Any,
    ) -> np.ndarray:
        rows: list[np.ndarray] = []
        for start in range(0, len(sentences), batch_size):
            chunk = [f"{prompt or ''}{t}" for t in sentences[start : start + batch_size]]
            rows.extend(
                retry_transient(partial(self._post, chunk), self.tries, self.BACKOFF, self.base_url)
            )
        if not rows:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        return np.stack(rows).astype(np.float32)

    def _post(self, texts: list[str]) -> list[np.ndarray]:
        body = {"model": self.name, "input": texts, "encoding_format": "float", **self.extra}
        answer = post_json(self._http, "/embeddings", body, self.base_url, self.timeout)
        try:
            data = sorted(answer["data"], key=lambda d: d["index"])
            vectors = [np.asarray(d["embedding"], dtype=np.float64) for d in data]
        except (KeyError, TypeError, ValueError):
            raise TransientError("malformed response body") from None
        if len(vectors) != len(texts) or any(v.ndim != 1 for v in vectors):
            raise RuntimeFault(
                f"{self.base_url} returned {counted(len(vectors), 'embedding')} for "
                f"{counted(len(texts), 'text')}"
                + (" (not one vector per text)" if any(v.ndim != 1 for v in vectors) else "")
            )
        for v in vectors:
            if self.dimension is None:
                self.dimension = v.size
            elif v.size != self.dimension:
                raise RuntimeFault(
                    f"{self.name} at {self.base_url} changed its embedding dimension from "
                    f"{self.dimension} to {v.size}"
                )
        return [v.astype(np.float32) for v in vectors]

    def similarity(self, a: Any, b: Any) -> Any:
        from sentence_transformers.util import cos_sim

        return cos_sim(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32))

    def similarity_pairwise(self, a: Any, b: Any) -> Any:
        from sentence_transformers.util import pairwise_cos_sim

        return pairwise_cos_sim(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32))
