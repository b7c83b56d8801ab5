"""Retrying a call that failed for a moment, and the one-line reason an HTTP server gave.

Every client of a remote service (the openai and ollama generation backends, the
embeddings endpoint) raises `TransientError` for a fault worth retrying (a connection
error, a timeout, HTTP 429 or 5xx, a malformed body) and calls through `retry_transient`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from shiftbench.core.messages import counted
from shiftbench.errors import RuntimeFault, env_seconds

T = TypeVar("T")


class TransientError(Exception):
    """A fault worth retrying: the same request may well succeed in a moment."""


CONNECT_SECONDS = 10.0  # the longest a server may take to accept a connection


def default_timeout(fallback: float) -> float:
    """Seconds a request to a model server may wait for its answer when no option says:
    `SHIFTBENCH_HTTP_TIMEOUT` (for every generation backend, judge and embeddings
    endpoint), or the caller's `fallback`."""

    return env_seconds("SHIFTBENCH_HTTP_TIMEOUT", fallback)


def http_timeout(seconds: float) -> Any:
    """httpx's timeout for a request: `seconds` for the answer (each read, write and pool
    wait), at most CONNECT_SECONDS to connect."""
    import httpx

    return httpx.Timeout(seconds, connect=min(CONNECT_SECONDS, seconds))


def transport_fault(exc: Exception, seconds: float) -> TransientError:
    """A transport failure as a fault worth retrying; a timeout says what was waited for
    and how long, so the last try's message names it."""
    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return TransientError(f"no connection within {min(CONNECT_SECONDS, seconds):g} s")
    if isinstance(exc, httpx.TimeoutException):
        return TransientError(f"no answer within {seconds:g} s")
    return TransientError(type(exc).__name__)


def unanswered(where: str, asked: str, seconds: float) -> RuntimeFault:
    """A server that took the connection but did not answer a first check (`asked`, such as
    `GET /v1/models`) in `seconds`: something listens there, so the address is right and
    the fault is the server's, at run time (one that refuses the connection is bad input)."""
    return RuntimeFault(
        f"{where} accepted the connection but did not answer {asked} within {seconds:g} s"
    )


def retry_transient(call: Callable[[], T], tries: int, backoff: float, where: str) -> T:
    """`call()`, tried again after each TransientError with exponential backoff."""
    for attempt in range(1, tries + 1):
        try:
            return call()
        except TransientError as exc:
            if attempt == tries:
                raise RuntimeFault(
                    f"{where} kept failing ({exc}) after {counted(tries, 'try', 'tries')}"
                ) from None
            time.sleep(backoff * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


def post_json(http: Any, path: str, body: dict[str, object], where: str, seconds: float) -> Any:
    """POST `body` to `path` of an OpenAI-compatible server through httpx client `http`,
    and the answer's JSON. A transport failure, HTTP 429 or 5xx or a malformed body is a
    TransientError (worth retrying); any other status than 200 a RuntimeFault naming
    `where` and what the server said."""
    import httpx

    try:
        response = http.post(path, json=body)
    except httpx.TransportError as exc:
        raise transport_fault(exc, seconds) from None
    if response.status_code == 429 or response.status_code >= 500:
        said = error_text(response)  # what the server says went wrong, if anything
        raise TransientError(f"HTTP {response.status_code}{': ' + said if said else ''}")
    if response.status_code != 200:
        raise RuntimeFault(f"{where} answered HTTP {response.status_code}: {error_text(response)}")
    try:
        return response.json()
    except ValueError:
        raise TransientError("malformed response body") from None


def error_text(response: Any) -> str:
    """The error an OpenAI-compatible server put in its answer (its `error`, or
    `error.message`), or the body's text, on one line of at most 200 characters."""
    try:
        error = response.json().get("error")
        if isinstance(error, dict):
            error = error.get("message")
        return " ".join(str(error).split())[:200]
    except (ValueError, AttributeError, json.JSONDecodeError):
        return " ".join(response.text.split())[:200]
