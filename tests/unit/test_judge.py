"""LLM judges, ParaPLUIE and drift in validate; judge-calibrate; compare across generators."""

from __future__ import annotations

import pytest

from shiftbench.validate.judge import MODES, parse_score, parse_spec, render


@pytest.mark.parametrize(
    ("reply", "mode", "score", "problem"),
    [
        ("4.5", "similarity", 4.5, None),
        ("Score: 4", "similarity", 4.0, None),
        ("**3.5**", "similarity", 3.5, None),
        ("I would rate this 4/5.", "quality", 4.0, None),
        ("Rating: 3 out of 5", "quality", 3.0, None),
        ("On a scale of 0 to 5, I give it 4.", "similarity", 4.0, None),
        ("3 (on a 0-5 scale)", "similarity", 3.0, None),
        ("3,5", "similarity", 3.5, None),  # decimal comma
        ("Four. Very close.", "quality", 4.0, None),
        ("Puntuación: 4", "quality", 4.0, None),
        ("評価\uff1a4", "quality", 4.0, None),
        ("<think>2 or maybe 3</think>3", "similarity", 3.0, None),
        ("The similarity is 4.27 (high).", "similarity", 4.3, None),
        ("Rating: 0", "similarity", 0.0, None),
        ("Rating: 0", "quality", None, "out of range"),
        ("6", "similarity", None, "out of range"),
        ("10/10", "quality", None, "out of range"),
        ("2 or 3", "similarity", None, "ambiguous"),
        ("Sentence 1: a dog.\nSentence 2: a cat.", "similarity", None, "ambiguous"),
        ("They mean the same.", "similarity", None, "no number"),
        ("   ", "quality", None, "empty"),
        ("<think>hmm", "quality", None, "empty"),
    ],
)
def test_parse_score(reply, mode, score, problem):
    assert parse_score(reply, MODES[mode]) == (score, problem)


def test_render_leaves_braces_in_texts_alone():
    filled = render("A={original} B={output} I={instruction}", original="{output}", output="x")
    assert filled == "A={output} B=x I={instruction}"


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("embedded", ("embedded", None, None)),
        ("ollama:qwen2.5:7b", ("ollama", "qwen2.5:7b", None)),
        (
            "openai:gpt-4o-mini@http://127.0.0.1:8000/v1",
            ("openai", "gpt-4o-mini", "http://127.0.0.1:8000/v1"),
        ),
    ],
)
def test_judge_spec(spec, parsed):
    assert parse_spec(spec) == parsed
