"""Any OpenAI-compatible chat server: vLLM's server, llama.cpp's server, Ollama's /v1, TGI.

Requests go out concurrently; transient faults (connection errors, timeouts, HTTP 429 and
5xx, malformed bodies) are retried with exponential backoff. The API key, if any, is read
from the environment and only ever sent in the Authorization header.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any
from urllib.parse import urlsplit

from shiftbench.core.records import BackendDescription
from shiftbench.core.registry import suggest
from shiftbench.core.retries import (
    TransientError,
    http_timeout,
    post_json,
    unanswered,
)
from shiftbench.errors import InputError, RuntimeFault
from shiftbench.llm.backends.base import (
    Generation,
    Request,
    Sampling,
)
from shiftbench.llm.backends.reasoning import strip_reasoning
from shiftbench.llm.backends.served import ServedBackend
from shiftbench.llm.logprobs import TOP_LOGPROBS

# seconds a request may wait for its answer (--timeout): up to 1024 tokens from a busy server
DEFAULT_TIMEOUT = 300.0
DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_MAX_TOKENS = 512


class OpenAIBackend(ServedBackend):
    """Chat completions from an OpenAI-compatible server."""

    name = "openai"
    UNNAMED = "the openai backend needs --model: the model name the server serves"
    URL_ENV = "OPENAI_BASE_URL"
    DEFAULT_URL = DEFAULT_BASE_URL
    WAITED = DEFAULT_TIMEOUT

    def __init__(self, model: str | None = None, **settings: Any) -> None:
        """`settings`: ServedBackend's (base_url, concurrency, timeout, tries)."""
        super().__init__(model, **settings)
        self._served: list[str] | None = None

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            headers = {}
            key = os.environ.get(API_KEY_ENV)
            if key:
                headers["Authorization"] = f"Bearer {key}"
            self._client = httpx.Client(
                base_url=self._url, headers=headers, timeout=http_timeout(self.timeout)
            )
        return self._client

    def load(self) -> None:
        """Check that the server answers and serves the model."""
        import httpx

        try:
            response = self._http().get("/models")
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout):  # nothing accepted the connection
                raise self._unreachable() from None
            asked = f"GET {urlsplit(self._url).path}/models"
            raise unanswered(f"the server at {self.base_url}", asked, self.timeout) from None
        except httpx.TransportError:
            raise self._unreachable() from None
        if response.status_code == 401:
            raise InputError(f"the server at {self.base_url} refused the API key (${API_KEY_ENV})")
        if response.status_code != 200:
            return  # some servers do not list models; the first request will tell
        try:
            served = [m["id"] for m in response.json().get("data", [])]
        except (ValueError, KeyError, TypeError, AttributeError):
            return
        self._served = served
        if served and self.model not in served:
            raise InputError(
                f"the server at {self.base_url} does not serve {self.model!r}; it serves "
                f"{', '.join(served)}{suggest(self.model, served)}"
            )

    def _unreachable(self) -> InputError:
        return InputError(
            f"cannot reach an OpenAI-compatible server at {self.base_url} (set --base-url)"
        )

    def describe(self) -> BackendDescription:
        import httpx

        return {
            "model": {"id": self.model},
            "backend": {"name": self.name, "base_url": self.base_url, "httpx": httpx.__version__},
        }

    @property
    def base_url(self) -> str:
        """The server's URL as printed and recorded."""
        return self.shown

    def _loaded(self) -> bool:
        return self._served is not None

    def _where(self) -> str:
        return self.base_url

    def _complete(self, request: Request, sampling: Sampling) -> Generation:
        caps = [c for c in (request.max_new_tokens, sampling.max_new_tokens) if c]
        body = {
            "model": self.model,
            "messages": request.messages,
            **sampling.sent(),
            "max_tokens": min(caps) if caps else DEFAULT_MAX_TOKENS,
            "seed": request.seed & 0x7FFFFFFF,  # servers differ on seed width; 31 bits suit all
            "stream": False,
        }
        return self._retried(lambda: self._post(body))

    def _first_token(self, request: Request) -> Generation:
        body = {
            "model": self.model,
            "messages": request.messages,
            "temperature": 0.0,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS,
            "stream": False,
        }
        return self._retried(lambda: self._post_logprobs(body))

    def _post_logprobs(self, body: dict[str, object]) -> Generation:
        """The first reply token's alternatives as a JSON {token: logprob} in `text`."""
        data = self._request(body)
        try:
            first = data["choices"][0]["logprobs"]["content"][0]
            top = {t["token"]: float(t["logprob"]) for t in first.get("top_logprobs") or []}
            top.setdefault(first["token"], float(first["logprob"]))
        except (KeyError, IndexError, TypeError, ValueError):
            raise RuntimeFault(
                f"{self.base_url} gave no log-probabilities (it may not support them)"
            ) from None
        return Generation(json.dumps(top), "logprobs")

    def _request(self, body: dict[str, object]) -> Any:
        """POST /chat/completions; the JSON answer, or TransientError / RuntimeFault."""
        return post_json(self._http(), "/chat/completions", body, self.base_url, self.timeout)

    def _post(self, body: dict[str, object]) -> Generation:
        start = time.perf_counter()
        data = self._request(body)
        try:
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
            reason = choice.get("finish_reason") or "stop"
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise TransientError("malformed response body") from None
        usage = data.get("usage") or {}
        return Generation(
            strip_reasoning(content),
            "length" if reason == "length" else "stop",
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            time.perf_counter() - start,
        )
