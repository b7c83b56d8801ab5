"""Generation backends, registered by name as lazy `module:Class` strings.

Adding a backend is one module plus one line here; heavy dependencies load only when the
backend is chosen.
"""

from __future__ import annotations

from shiftbench.core.registry import Registry
from shiftbench.llm.backends.base import Backend, Generation, OnDone, Request, Sampling

BACKENDS = Registry(
    "backend",
    {
        "embedded": "shiftbench.llm.backends.embedded:EmbeddedBackend",
        "ollama": "shiftbench.llm.backends.ollama:OllamaBackend",
        "openai": "shiftbench.llm.backends.openai:OpenAIBackend",
        "vllm": "shiftbench.llm.backends.vllm_backend:VLLMBackend",
    },
)
DEFAULT_BACKEND = "embedded"


def backend_target(name: str) -> str:
    """The `module:Class` registered as `name`; an InputError naming the choices if none."""
    return str(BACKENDS.entry(name))


def get_backend(name: str, model: str | None = None, **options: object) -> Backend:
    """Build the backend registered as `name` for `model` (its default model when None)."""
    cls = BACKENDS.load(name)
    backend: Backend = cls(model=model, **options)
    return backend


__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "Backend",
    "Generation",
    "OnDone",
    "Request",
    "Sampling",
    "backend_target",
    "get_backend",
]
