"""Language identification for the wrong-language check.

Two identifiers, both answering ISO 639-1 codes, or "und" (undetermined) for texts too
short to judge (fewer than MIN_LETTERS letters) and for texts the identifier gives up on:
- `lingua` (the default): n-gram models of 75 languages, deterministic.
- `langdetect`: character n-gram naive Bayes. It samples, so it is seeded here (seed 0)
  and then gives the same answer for the same text every time.
`bench/bench_langid.py` measures both on the STS Benchmark sentences in six languages:
lingua named 98.3% of 15,128 sentences right and langdetect 96.6% (English: 98.2% against
93.7%), and lingua was 5.5 times as fast; the README has the table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from shiftbench.errors import InputError

UNDETERMINED = "und"
MIN_LETTERS = 12  # below this, an answer would be a guess


class LanguageID(Protocol):
    name: str

    def detect(self, texts: Iterable[str]) -> list[str]:
        """One ISO 639-1 code (or "und") per text."""


def too_short(text: str) -> bool:
    return sum(ch.isalpha() for ch in text) < MIN_LETTERS


class Langdetect:
    """langdetect, seeded so that its sampling gives one answer per text."""

    name = "langdetect"

    def __init__(self, seed: int = 0) -> None:
        from langdetect import DetectorFactory
        from langdetect.detector_factory import init_factory

        DetectorFactory.seed = seed
        init_factory()

    def detect(self, texts: Iterable[str]) -> list[str]:
        from langdetect import detect
        from langdetect.lang_detect_exception import LangDetectException

        codes = []
        for text in texts:
            if too_short(text):
                codes.append(UNDETERMINED)
                continue
            try:
                code = detect(text)
            except LangDetectException:
                code = UNDETERMINED
            codes.append(code.split("-")[0])  # zh-cn, zh-tw -> zh
        return codes


class Lingua:
    """lingua-language-detector over all its languages, in two passes.

    The fast low-accuracy models answer first; a text whose answer they give with less
    than FAST_CONFIDENCE goes to the full models. On the STS Benchmark sentences in six
    languages this gave 98.3% right against the full models' 98.5%, at about four times
    their speed (bench/bench_langid.py).
    """

    name = "lingua"
    FAST_CONFIDENCE = 0.995

    def __init__(self) -> None:
        try:
            from lingua import LanguageDetectorBuilder
        except ImportError:
            raise InputError(
                "language ID with lingua needs the lingua-language-detector package: "
                "pip install lingua-language-detector"
            ) from None
        builder = LanguageDetectorBuilder.from_all_languages
        self._fast: Any = builder().with_low_accuracy_mode().build()
        self._full: Any = builder().build()

    def detect(self, texts: Iterable[str]) -> list[str]:
        texts = list(texts)
        codes = [UNDETERMINED] * len(texts)
        judged = [i for i, t in enumerate(texts) if not too_short(t)]
        ranked = self._fast.compute_language_confidence_values_in_parallel(
            [texts[i] for i in judged]
        )
        unsure = []
        for i, values in zip(judged, ranked, strict=True):
            if values and values[0].value >= self.FAST_CONFIDENCE:
                codes[i] = values[0].language.iso_code_639_1.name.lower()
            else:
                unsure.append(i)
        found = self._full.detect_languages_in_parallel_of([texts[i] for i in unsure])
        for i, language in zip(unsure, found, strict=True):
            if language is not None:
                codes[i] = language.iso_code_639_1.name.lower()
        return codes


IDENTIFIERS = {"langdetect": Langdetect, "lingua": Lingua}
DEFAULT_IDENTIFIER = "lingua"


def get_identifier(name: str) -> LanguageID:
    try:
        cls = IDENTIFIERS[name]
    except KeyError:
        raise InputError(
            f"unknown language identifier {name!r}; available: {', '.join(IDENTIFIERS)}"
        ) from None
    identifier: LanguageID = cls()
    return identifier
