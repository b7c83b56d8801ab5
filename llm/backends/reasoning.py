"""Removing reasoning that a model writes into its answer despite being asked not to."""

from __future__ import annotations

import re

_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_UNCLOSED = re.compile(r"^\s*<(think|thinking|reasoning)>.*", re.DOTALL | re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """The answer without <think>-style blocks; an unclosed block leaves no answer."""
    text = _BLOCK.sub("", text)
    text = _UNCLOSED.sub("", text)
    return text.strip()
