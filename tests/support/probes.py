"""Shared by the probe tests: the figures computed independently (cosine and NED grids,
anchors) and the encoder they use."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from support.environment import ENCODER
from support.files import read_rows


def _expected_anchors(run: Path, seed: int = 0, gold=lambda r: r["labels"] == 1):
    """The documented recipe: gold pairs (by default label 1) in row order; each anchor's
    random partner drawn from the split's unique texts with numpy's default_rng(seed),
    skipping the anchor and its paraphrase."""
    rows = read_rows(run / "original" / "test.jsonl")
    pool = list(dict.fromkeys(r[f] for r in rows for f in ("sentence1", "sentence2")))
    rng = np.random.default_rng(seed)
    anchors = []
    for r in rows:
        if not gold(r):
            continue
        while (partner := pool[int(rng.integers(len(pool)))]) in (r["sentence1"], r["sentence2"]):
            pass
        anchors.append((r["row_id"], r["sentence1"], r["sentence2"], partner))
    return anchors


def _cos(a, b):
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _ned(a, b):
    """ALIGN-SIM's normalised Euclidean distance, row by row."""
    ca, cb = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
    return 0.5 * np.sum((ca - cb) ** 2, axis=1) / (np.sum(ca**2, axis=1) + np.sum(cb**2, axis=1))


# The documented criterion-1 grid of both measures: from -1 to 1 by 0.1.
COSINE_GRID = NED_GRID = np.linspace(-1.0, 1.0, 21)


@functools.cache
def _embedder():
    """all-MiniLM-L6-v2 through sentence-transformers, loaded once; each text is encoded
    once per session, since the same texts come back for both measures and in several
    tests."""
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    model = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    vectors: dict[str, np.ndarray] = {}

    def embed(texts):
        texts = list(texts)
        new = [t for t in dict.fromkeys(texts) if t not in vectors]
        if new:
            vectors.update(zip(new, model.encode(new, convert_to_numpy=True), strict=True))
        return np.asarray([vectors[t] for t in texts], dtype=np.float64)

    return embed
