"""Encoder options: a model's own code and arguments, encode arguments and prompts, each
recorded, each scored as mteb scores the same model with the same settings."""

from __future__ import annotations

import pytest
from support.environment import ENCODER


def test_encode_arguments_are_part_of_the_embedding_cache_key(tmp_path):
    """Two runs with different encode arguments never share cached vectors."""
    from shiftbench.core.models.embedding_store import EmbeddingStore
    from shiftbench.core.models.encoders import Encoder

    class Static(Encoder):  # no model load: only the cache key is under test
        def _load(self):
            return None

    a = Static(ENCODER, cache_dir=tmp_path)
    b = Static(ENCODER, cache_dir=tmp_path, encode_kwargs={"truncate_dim": 64})
    c = Static(ENCODER, cache_dir=tmp_path, encode_kwargs={"truncate_dim": 64})
    assert isinstance(a.store, EmbeddingStore) and a.store.path != b.store.path
    assert b.store.path == c.store.path


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--model-kwarg", "eager"], "--model-kwarg 'eager' is not KEY=VALUE"),
        (["--encode-kwarg", "batch_size=4"],
         "--encode-kwarg batch_size is set by shiftbench itself"),
        (["--encode-kwarg", "prompt=x"],
         "--encode-kwarg prompt is set by shiftbench itself (use --prompt)"),
        (["--prompt", "query"], "--prompt 'query' is not NAME=TEXT"),
        (["--model-kwarg", "torch_dtype=float16"],
         "the weights' dtype is --precision, not a --model-kwarg"),
    ],
)  # fmt: skip
def test_bad_encoder_options_are_one_line_and_write_nothing(invoke, tmp_path, options, message):
    out = tmp_path / "results"
    result = invoke("evaluate", "sample", "-m", ENCODER, "-o", out, *options)
    assert (result.exit_code, result.stderr) == (2, f"Error: {message}\n")
    assert not out.exists()
