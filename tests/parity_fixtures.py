"""Session fixtures for the parity tests (evaluate against mteb and against independent
computations, with the real encoder on real data): work that several tests need is done
once per session, and once per worker under pytest-xdist. Tests that share one of these
across modules carry the same xdist group, so that one worker does the work.

Loaded by tests/conftest.py (`pytest_plugins`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def embedding_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One on-disk embedding store (evaluate's --cache-dir) for tests that do not test the
    cache: a text the real encoder embedded for one test is read back in the next, not
    embedded again. Tests of the cache itself keep their own empty stores."""
    return tmp_path_factory.mktemp("embedding-store")


@dataclass(frozen=True)
class Evaluated:
    """What one `shiftbench evaluate` wrote and printed."""

    folder: Path
    stdout: str


@pytest.fixture(scope="session")
def evaluated(tmp_path_factory: pytest.TempPathFactory):
    """`evaluated(*args)`: the results of `shiftbench evaluate *args -o FOLDER`, run once
    per session for each distinct argument list, with caches of its own, as a test would
    run it. Tests read the results folder and never change it (copy it to change it)."""
    from click.testing import CliRunner
    from conftest import isolate

    from shiftbench.cli import cli

    done: dict[tuple[str, ...], Evaluated] = {}

    def run(*args: object) -> Evaluated:
        key = tuple(str(a) for a in args)
        if key not in done:
            base = tmp_path_factory.mktemp("evaluated")
            with pytest.MonkeyPatch.context() as monkeypatch:
                isolate(monkeypatch, base / "cache")
                result = CliRunner().invoke(
                    cli, ["evaluate", *key, "-o", str(base / "results")], catch_exceptions=False
                )
            assert result.exit_code == 0, result.output
            done[key] = Evaluated(base / "results", result.stdout)
        return done[key]

    return run


@pytest.fixture(scope="session")
def mteb_model():
    """all-MiniLM-L6-v2 as the SentenceTransformer that mteb's side of a
    parity test runs, whose encode (which encode_query and encode_document call) keeps each
    text's vector for the rest of the session: mteb asks for the same corpus in several
    tests (XQuAD's 240 paragraphs in five of them), and the real model embeds it once.
    Only mteb's side reads these vectors: the model is an instance of its own, not the one
    shiftbench's Encoder shares within a process, and shiftbench's side embeds through its
    own code (and its own store, `embedding_store`), so the two stay independent
    computations."""
    import numpy as np
    from conftest import ENCODER
    from sentence_transformers import SentenceTransformer

    from shiftbench.encoders import resolve_encoder

    kept: dict[tuple, dict[str, np.ndarray]] = {}

    def remembering(encode):
        def call(*args, **kwargs):
            texts = args[0] if args else kwargs.pop("inputs", kwargs.pop("sentences", None))
            plain = isinstance(texts, list) and all(isinstance(t, str) for t in texts)
            as_arrays = (
                not kwargs.get("convert_to_tensor")
                and kwargs.get("output_value", "sentence_embedding") == "sentence_embedding"
            )
            if len(args) > 1 or not (plain and texts and as_arrays):
                return encode(texts, *args[1:], **kwargs)
            settings = sorted((k, repr(v)) for k, v in kwargs.items() if k != "batch_size")
            vectors = kept.setdefault(tuple(settings), {})
            missing = [t for t in dict.fromkeys(texts) if t not in vectors]
            if missing:
                vectors.update(zip(missing, encode(missing, **kwargs), strict=True))
            return np.stack([vectors[t] for t in texts])

        return call

    loaded = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    loaded.encode = remembering(loaded.encode)
    return loaded
