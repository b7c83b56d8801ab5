"""bench/bench_vllm.py's check of a pair: gen's rows must hold the bare vLLM call's output
for their texts, as the backend keeps an output, and both sides must have made the same
texts (vLLM itself is not needed)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_vllm.py"


@pytest.fixture(scope="module")
def bench_vllm():
    spec = importlib.util.spec_from_file_location("bench_vllm", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_vllm"] = module
    spec.loader.exec_module(module)
    return module


def runs(bench_vllm, tmp_path, rows, bare):
    """A's run folder holding `rows` and B's texts.json holding `bare`, as two Runs."""
    table = tmp_path / "a" / "run" / "paraphrase-s1"
    table.mkdir(parents=True)
    lines = [json.dumps(r) for r in rows]
    (table / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "texts.json").write_text(json.dumps(bare), encoding="utf-8")
    return bench_vllm.Run("A", 1.0, "", tmp_path / "a"), bench_vllm.Run(
        "B", 1.0, "", tmp_path / "b"
    )


ROW = {"original_sentence1": "One.", "sentence1": "Uno.",
       "original_sentence2": "Two.", "sentence2": "Dos."}  # fmt: skip


def test_outputs_kept_as_the_backend_keeps_them_are_the_same(bench_vllm, tmp_path):
    a, b = runs(bench_vllm, tmp_path, [ROW], {"One.": " Uno.\n", "Two.": "Dos. \ufffd"})
    assert bench_vllm.same_texts(a, b) is None


def test_a_different_output_is_named(bench_vllm, tmp_path):
    a, b = runs(bench_vllm, tmp_path, [ROW], {"One.": "Uno.", "Two.": "Deux."})
    assert bench_vllm.same_texts(a, b) == "'Two.': gen 'Dos.', bare call 'Deux.'"


def test_texts_made_by_one_side_only_are_named(bench_vllm, tmp_path):
    a, b = runs(bench_vllm, tmp_path, [ROW], {"One.": "Uno.", "Two.": "Dos.", "Three.": "Tres."})
    assert bench_vllm.same_texts(a, b) == "the bare call made outputs for 1 texts gen has not"
    a, b = runs(bench_vllm, tmp_path / "x", [ROW], {"One.": "Uno."})
    assert bench_vllm.same_texts(a, b) == "the bare call made no output for 'Two.'"
