"""Session fixtures for the parity tests (evaluate against mteb and against independent
computations, with the real encoder on real data): work that several tests need is done
once per session, and once per worker under pytest-xdist. Tests that share one of these
across modules carry the same xdist group, so that one worker does the work.

Loaded by tests/conftest.py (`pytest_plugins`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


# How many of the texts that shiftbench's side embedded mteb's side embeds again, per call:
# the longest (truncation at the model's 256 tokens shows there first) and a spread of the
# rest.
CHECKED_LONGEST, CHECKED_SPREAD = 8, 8


def shiftbench_vectors(store: Path, encoder: str) -> Callable[[list[str]], dict[str, Any]]:
    """`vectors(texts)`: the vectors shiftbench's evaluate stored in `store` (its
    --cache-dir) for those of `texts` it embedded without a prompt with `encoder`, as a
    plain float32 model (no model or encode keyword arguments)."""
    import sqlite3

    from shiftbench.core.models.encoders import EmbeddingStore

    opened: dict[Path, EmbeddingStore | None] = {}  # per file; evaluate adds files as it runs

    def plain_store(path: Path) -> EmbeddingStore | None:
        with closing(sqlite3.connect(path)) as db:
            key = json.loads(db.execute("SELECT key FROM model").fetchone()[0])
        plain = {k: v for k, v in key.items() if k != "revision"}
        return (
            EmbeddingStore(store, key)
            if plain == {"model": encoder, "precision": "float32"}
            else None
        )

    def vectors(texts: list[str]) -> dict[str, Any]:
        keys = {EmbeddingStore.text_key(None, t): t for t in texts}
        found: dict[str, Any] = {}
        for path in sorted(store.glob("*.sqlite")):
            if path not in opened:
                opened[path] = plain_store(path)
            if (plain := opened[path]) is not None:
                found.update((keys[k], v) for k, v in plain.get(list(keys)).items())
        return found

    return vectors


def checked_sample(texts: list[str]) -> list[str]:
    """The texts a parity test's mteb side embeds again to check shiftbench's vectors."""
    by_length = sorted(texts, key=len, reverse=True)
    longest, rest = by_length[:CHECKED_LONGEST], by_length[CHECKED_LONGEST:]
    step = max(1, len(rest) // CHECKED_SPREAD)
    return longest + rest[::step][:CHECKED_SPREAD]


# encode's arguments that leave a plain model's vectors as they are, at these values
# (sentence-transformers' defaults; `task` routes only a model with a Router module)
PLAIN_ENCODE = {
    "prompt": (None, ""), "prompt_name": (None,), "normalize_embeddings": (False,),
    "precision": ("float32",), "truncate_dim": (None,), "output_value": ("sentence_embedding",),
    "convert_to_numpy": (True,), "convert_to_tensor": (False,), "task": (None, "query", "document"),
    "device": (None,), "pool": (None,), "chunk_size": (None,), "show_progress_bar": (None, False),
    "batch_size": None,  # any
}  # fmt: skip


def plain_call(kwargs: dict[str, Any]) -> bool:
    """Whether an encode call with these arguments makes the vectors shiftbench's side
    stores (prompt None, nothing else that changes them)."""
    return all(
        name in PLAIN_ENCODE and (PLAIN_ENCODE[name] is None or value in PLAIN_ENCODE[name])
        for name, value in kwargs.items()
    )


@pytest.fixture(scope="session")
def mteb_model(embedding_store: Path):
    """all-MiniLM-L6-v2 as the SentenceTransformer that mteb's side of a parity test runs.

    Its encode (which encode_query and encode_document call) keeps each text's vector for
    the rest of the session: mteb asks for the same corpus in several tests (XQuAD's 240
    paragraphs in five of them). A text that shiftbench's side of the test already embedded
    (it stored the vector in `embedding_store`, evaluate's --cache-dir) is not embedded a
    second time: mteb's side takes that vector, after embedding a sample of such texts
    itself (the longest, and a spread of the rest; `checked_sample`) and finding the same
    vectors to 1e-5. So each text is embedded once, and each parity test still compares
    two computations of its scores from one set of vectors, mteb's metric code against
    shiftbench's; that shiftbench embeds as the model does is checked on every call (the
    sample), against the published MTEB scores (test_scores_equal_mteb), and through mteb's
    own model loading (test_encoders.py), which does not use this fixture."""
    import numpy as np
    from conftest import ENCODER
    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder

    kept: dict[tuple, dict[str, np.ndarray]] = {}
    stored = shiftbench_vectors(embedding_store, ENCODER)

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
            settings = tuple(sorted((k, repr(v)) for k, v in kwargs.items() if k != "batch_size"))
            vectors = kept.setdefault(settings, {})
            missing = [t for t in dict.fromkeys(texts) if t not in vectors]
            # only a call as shiftbench's side makes it (no prompt) reads its vectors
            theirs = stored(missing) if missing and plain_call(kwargs) else {}
            if theirs:
                sample = checked_sample(list(theirs))
                for text, vector in zip(sample, encode(sample, **kwargs), strict=True):
                    gap = float(np.abs(vector - theirs[text]).max())
                    assert gap < 1e-5, f"shiftbench's vector of {text!r} is off by {gap}"
                vectors.update(theirs)
                missing = [t for t in missing if t not in theirs]
            if missing:
                vectors.update(zip(missing, encode(missing, **kwargs), strict=True))
            return np.stack([vectors[t] for t in texts])

        return call

    loaded = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    loaded.encode = remembering(loaded.encode)
    return loaded
