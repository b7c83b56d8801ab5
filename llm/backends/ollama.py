"""Ollama, through the official `ollama` Python client.

Every request sets `num_ctx` (Ollama's default context is small, and it shortens longer
prompts without saying so) and `num_predict`; `prompt_eval_count` tells when a prompt left
no room for the answer. Reasoning models are asked not to think, and any reasoning that
leaks into the answer is removed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, TypedDict

from shiftbench.core.records import BackendDescription
from shiftbench.core.registry import suggest
from shiftbench.core.retries import (
    TransientError,
    http_timeout,
    transport_fault,
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

# seconds a request may wait for its answer (--timeout); Ollama may load the model first
DEFAULT_TIMEOUT = 600.0
DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_NUM_CTX = 8192
DEFAULT_MAX_TOKENS = 512


class _ServerInfo(TypedDict):
    """What load() learns of the server and the model."""

    digest: str | None
    thinking: bool
    server: str


class OllamaBackend(ServedBackend):
    """Chats with a model served by Ollama, several requests at a time."""

    name = "ollama"
    UNNAMED = "the ollama backend needs --model: an Ollama model name"
    URL_ENV = "OLLAMA_HOST"
    DEFAULT_URL = DEFAULT_HOST
    WAITED = DEFAULT_TIMEOUT

    def __init__(
        self, model: str | None = None, *, num_ctx: int = DEFAULT_NUM_CTX, **settings: Any
    ) -> None:
        """`settings`: ServedBackend's (base_url, concurrency, timeout, tries)."""
        super().__init__(model, **settings)
        self.num_ctx = num_ctx
        self._info: _ServerInfo | None = None

    def _ollama(self) -> Any:
        if self._client is None:
            try:
                import ollama
            except ImportError:
                raise InputError(
                    "the ollama backend needs the ollama package: pip install ollama"
                ) from None
            self._client = ollama.Client(host=self._url, timeout=http_timeout(self.timeout))
        return self._client

    def load(self) -> None:
        """Check the server and the model; note its digest and whether it can think."""
        import httpx
        import ollama

        client = self._ollama()
        asked = "POST /api/show"  # what is waited for, should the server not answer
        try:
            shown = client.show(self.model)
            asked = "GET /api/tags"
            listed = client.list()
            asked = "GET /api/version"
            version = (
                httpx.get(f"{self._url}/api/version", timeout=http_timeout(self.timeout))
                .json()
                .get("version")
            )
        except (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout):
            raise InputError(
                f"cannot reach Ollama at {self.host} (start it with 'ollama serve', or set "
                "--base-url)"
            ) from None
        except httpx.TimeoutException:
            raise unanswered(f"Ollama at {self.host}", asked, self.timeout) from None
        except ollama.ResponseError as exc:
            if exc.status_code != 404:
                raise RuntimeFault(
                    f"Ollama at {self.host} answered {exc.status_code}: {exc}"
                ) from None
            names = [m.model.removesuffix(":latest") for m in client.list().models if m.model]
            raise InputError(
                f"Ollama at {self.host} has no model {self.model!r} (pull it with 'ollama pull "
                f"{self.model}'){suggest(self.model, names)}"
            ) from None
        wanted = {self.model, f"{self.model}:latest"}
        digest = next((m.digest for m in listed.models if m.model in wanted), None)
        self._info = {
            "digest": digest,
            "thinking": "thinking" in (shown.capabilities or []),
            "server": version,
        }

    def describe(self) -> BackendDescription:
        from importlib.metadata import version

        if self._info is None:
            self.load()
        assert self._info is not None
        return {
            "model": {"id": self.model, "digest": self._info["digest"], "num_ctx": self.num_ctx},
            "backend": {
                "name": self.name,
                "host": self.host,
                "server_version": self._info["server"],
                "ollama_client": version("ollama"),
            },
        }

    @property
    def host(self) -> str:
        """The server's URL as printed and recorded."""
        return self.shown

    def _loaded(self) -> bool:
        return self._info is not None

    def _where(self) -> str:
        return f"Ollama at {self.host}"

    def _complete(self, request: Request, sampling: Sampling) -> Generation:
        caps = [c for c in (request.max_new_tokens, sampling.max_new_tokens) if c]
        budget = min(caps) if caps else DEFAULT_MAX_TOKENS
        options = {
            "seed": request.seed & 0x7FFFFFFF,
            **sampling.sent(),
            "num_ctx": self.num_ctx,
            "num_predict": budget,
        }
        return self._retried(lambda: self._chat(request, options, budget))

    def _first_token(self, request: Request) -> Generation:
        options = {"seed": 0, "temperature": 0.0, "num_ctx": self.num_ctx, "num_predict": 1}
        return self._retried(lambda: self._chat(request, options, 1, top_logprobs=TOP_LOGPROBS))

    def _chat(
        self,
        request: Request,
        options: Mapping[str, object],
        budget: int,
        top_logprobs: int | None = None,
    ) -> Generation:
        """One chat call. With `top_logprobs`, the Generation's text is instead the first
        reply token's alternatives as JSON {token: logprob}."""
        import httpx
        import ollama
        import pydantic

        assert self._info is not None
        start = time.perf_counter()
        think = False if self._info["thinking"] else None
        try:
            extra: dict[str, object] = {}
            if top_logprobs is not None:
                extra = {"logprobs": True, "top_logprobs": top_logprobs}
            response = self._ollama().chat(
                model=self.model,
                messages=request.messages,
                options=options,
                think=think,
                stream=False,
                **extra,
            )
        except ollama.ResponseError as exc:
            if exc.status_code == 429 or exc.status_code >= 500 or exc.status_code == -1:
                raise TransientError(f"HTTP {exc.status_code}") from None
            raise RuntimeFault(f"Ollama at {self.host} answered {exc.status_code}: {exc}") from None
        except httpx.TransportError as exc:
            raise transport_fault(exc, self.timeout) from None
        except ConnectionError as exc:
            raise TransientError(type(exc).__name__) from None
        except (pydantic.ValidationError, ValueError):
            raise TransientError("malformed response body") from None
        if top_logprobs is not None:
            if not response.logprobs:
                raise RuntimeFault(
                    f"Ollama at {self.host} gave no log-probabilities (it needs version "
                    "0.12.11 or later)"
                )
            first = response.logprobs[0]
            top = {t.token: float(t.logprob) for t in first.top_logprobs or []}
            top.setdefault(first.token, float(first.logprob))
            return Generation(json.dumps(top), "logprobs")
        prompt_tokens = response.prompt_eval_count
        # A prompt that fills the room the answer needed was cut or shifted by the server.
        crowded = prompt_tokens is not None and prompt_tokens + budget > self.num_ctx
        finish = "length" if response.done_reason == "length" or crowded else "stop"
        return Generation(
            strip_reasoning(response.message.content or ""),
            finish,
            prompt_tokens,
            response.eval_count,
            time.perf_counter() - start,
        )
