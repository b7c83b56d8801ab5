"""Pair similarities exactly as mteb computes them for STS and PairClassification.

mteb scores embeddings in float32: scikit-learn's paired distances on the float32
embeddings (cosine as 1 - the paired cosine distance), the dot product of each pair with
numpy, and the model's own similarity with torch in float32. Only afterwards are the
scores turned into Python floats and correlated. Computing them in float64 instead moves
near-ties apart (or together), and on data where many pairs are nearly tied that changes
a Spearman correlation in the fourth decimal; so every score here is float32 first, then
widened exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def as_float32(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def paired_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from sklearn.metrics.pairwise import paired_cosine_distances

    return np.asarray(1 - paired_cosine_distances(as_float32(a), as_float32(b)))


def paired_unit_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each pair's cosine as HTEB's release takes it: both embeddings divided by their
    length (at least 1e-12), then the products summed, all in float32."""
    a32, b32 = as_float32(a), as_float32(b)
    a32 = a32 / np.maximum(np.linalg.norm(a32, axis=-1, keepdims=True), np.float32(1e-12))
    b32 = b32 / np.maximum(np.linalg.norm(b32, axis=-1, keepdims=True), np.float32(1e-12))
    return np.asarray(np.sum(a32 * b32, axis=-1), dtype=np.float32)


def pair_cosine(source: Any) -> Any:
    """The paired cosine the source's evaluation settings name: HTEB's (`pair_cosine:
    unit-cosine`, recorded under --protocol hteb) or mteb's."""
    settings = source.get("protocol") or {}
    return paired_unit_cosine if settings.get("pair_cosine") == "unit-cosine" else paired_cosine


def paired_manhattan(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from sklearn.metrics.pairwise import paired_manhattan_distances

    return np.asarray(paired_manhattan_distances(as_float32(a), as_float32(b)))


def paired_euclidean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from sklearn.metrics.pairwise import paired_euclidean_distances

    return np.asarray(paired_euclidean_distances(as_float32(a), as_float32(b)))


def paired_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each pair's dot product, one numpy dot per pair (a float32 BLAS dot each)."""
    a32, b32 = as_float32(a), as_float32(b)
    return np.asarray([np.dot(x, y) for x, y in zip(a32, b32, strict=True)], dtype=np.float32)


def paired_own(a: np.ndarray, b: np.ndarray, similarity: str, model: Any = None) -> np.ndarray:
    """The model's own similarity of each pair, as mteb takes it from the model's
    similarity function: cosine and dot product in torch float32; any other through
    the model's `similarity_pairwise` (cosine when there is no model)."""
    import torch

    ta, tb = torch.from_numpy(as_float32(a)), torch.from_numpy(as_float32(b))
    if similarity == "cosine" or (similarity != "dot" and model is None):
        ta = torch.nn.functional.normalize(ta, p=2, dim=1)
        tb = torch.nn.functional.normalize(tb, p=2, dim=1)
        return (ta * tb).sum(dim=-1).numpy()
    if similarity == "dot":
        return (ta * tb).sum(dim=-1).numpy()
    return np.asarray(model.similarity_pairwise(ta, tb), dtype=np.float32)


def widened(scores: np.ndarray) -> np.ndarray:
    """float32 scores as float64, exactly (as mteb's `.tolist()` turns them into floats)."""
    return np.asarray(scores, dtype=np.float32).astype(np.float64)
