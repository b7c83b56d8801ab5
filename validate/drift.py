"""Embedding drift: 1 - cosine between an original and its output under a sentence encoder.

0 means the encoder sees no change; a paraphrase that keeps the meaning stays near 0,
while an output about something else moves towards 1. Empty outputs get no value.
"""

from __future__ import annotations

import numpy as np

from shiftbench.core.models.encoders import Encoder
from shiftbench.llm.cache import GenerationCache
from shiftbench.validate.judge import Item


class Drift:
    """Per-pair drift under one encoder (any sentence-transformers model or local path,
    `NAME=MODEL` to call it NAME), keyed `drift:<the encoder's shown name>`."""

    def __init__(
        self,
        spec: str,
        *,
        batch_size: int = 32,
        device: str | None = None,
        progress: bool = False,
    ) -> None:
        self.encoder = Encoder(
            spec, batch_size=batch_size, device=device, progress=progress,
            option="--drift-encoder",
        )  # fmt: skip
        self.key = f"drift:{self.encoder.name}"

    def describe(self) -> dict[str, object]:
        return {"kind": "drift", "encoder": self.encoder.describe()}

    def score(
        self, items: list[Item], cache: GenerationCache, *, quiet: bool = True, label: str = ""
    ) -> list[tuple[float | None, str | None, str | None]]:
        """(drift, reply, problem) per item; drift rounded to 4 decimals."""
        kept = [i for i, item in enumerate(items) if item.output.strip()]
        values: list[tuple[float | None, str | None, str | None]] = [
            (None, None, "empty output")
        ] * len(items)
        if not kept:
            return values
        a = self.encoder.embed([items[i].original for i in kept]).astype(np.float64)
        b = self.encoder.embed([items[i].output for i in kept]).astype(np.float64)
        norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        cosine = np.einsum("ij,ij->i", a, b) / np.where(norms == 0, 1.0, norms)
        for i, c in zip(kept, cosine, strict=True):
            values[i] = (round(float(1.0 - c), 4), None, None)
        return values
