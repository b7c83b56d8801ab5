"""Writing systems that change how text is measured: scripts written without spaces between
words, and scripts whose characters each carry about a syllable or a word.

Edit distance counts words, and whitespace finds no words in Chinese, Japanese or Thai: there
each character is a unit of its own. Language ID needs enough text to judge, and four Han
characters say as much about the language as a dozen Latin letters.
"""

from __future__ import annotations

import re

# Han (with extension A and the compatibility block), Hiragana, Katakana (with the
# half-width forms), Thai, Lao, Myanmar and Khmer: written without spaces between words.
_UNSPACED = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u309f\u30a0-\u30ff\uff66-\uff9f"
    "\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff"
)
_TOKEN = re.compile(f"[{_UNSPACED}]|[^\\s{_UNSPACED}]+")

# Han, kana and Hangul syllables: one character is a syllable or a word, worth several letters
# of an alphabet; Thai, Lao, Myanmar and Khmer characters are letters of an alphabet.
_DENSE = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uff66-\uff9f\uac00-\ud7af]"
)
DENSE_WEIGHT = 3  # letters one dense character counts as


def tokens(text: str) -> list[str]:
    """Whitespace-separated words, with each character of an unspaced script a token of its
    own ("我喜欢猫" is four tokens, "I like 猫" three)."""
    return _TOKEN.findall(text)


def letter_count(text: str) -> int:
    """Letters in `text`, each Han, kana or Hangul character counting DENSE_WEIGHT times."""
    dense = len(_DENSE.findall(text))
    return sum(ch.isalpha() for ch in text) + (DENSE_WEIGHT - 1) * dense
