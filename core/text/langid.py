"""Language identification for the wrong-language check.

Two identifiers, both answering shiftbench's language codes (gen.languages: ISO 639-1 where
there is one), or "und" (undetermined) for texts too short to judge (fewer than MIN_LETTERS
letters, a Han, kana or Hangul character counting as validate.scripts.DENSE_WEIGHT letters)
and for texts the identifier gives up on:
- `lingua` (the default): n-gram models of 75 languages, deterministic.
- `langdetect`: character n-gram naive Bayes. It samples, so it is seeded here (seed 0)
  and then gives the same answer for the same text every time.
`bench/bench_langid.py` measures both on the STS Benchmark sentences in six languages:
lingua named 98.3% of 15,128 sentences right and langdetect 96.6% (English: 98.2% against
93.7%), and lingua was 5.5 times as fast; docs/guides/validate.md has the table.

Given the language each text should be in, an identifier answers that language whenever
its confidence is at least EXPECTED_SHARE of the top language's, and the top language
otherwise. With lingua, plain arg-max wrongly flagged 1.79% of 2,400 correct sentences in
the six languages (3.25% of the English ones: a short sentence can look Icelandic or
Welsh); the share rule flags 0.33% (English 0.25%) and still catches 99.17% of the same
sentences checked against one of the five other languages, against arg-max's 99.72%
(bench/bench_langid.py --per-language 400 --expected).

With lingua, an answer that contradicts the expected language is reported only when two
more looks back it (see Lingua._second_look): lingua on the text's plain words (plain_words:
no codes, numbers or names) and langdetect on the whole text. lingua alone called 6 of
BIOSSES's 183 English sentences Latin (3.3%) and up to 2.5% of the texts of a dataset
another language; with the two looks no dataset or language in ../shared/data passes
0.5% (BIOSSES 0, all 33 of 50,839 texts), and real translations checked against their
original's language pass as that language 1.3% of the time (0.8% before), at most 2.3%
for one pair (bench/bench_langid_domains.py; the tables are in docs/guides/validate.md).

Each identifier knows a fixed set of languages (`languages`); a text that should be in
another one is not checked (see `checkable`) rather than judged by a model that cannot
name its language.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import cache
from typing import Any, Protocol

from shiftbench.core.registry import Registry
from shiftbench.core.text.languages import get_language
from shiftbench.core.text.scripts import letter_count
from shiftbench.errors import InputError

UNDETERMINED = "und"
MIN_LETTERS = 12  # below this, an answer would be a guess
EXPECTED_SHARE = 0.5  # the expected language wins with this share of the top confidence
# langdetect vetoes a wrong-language answer when the expected language has this share of
# its top probability (langdetect's probabilities come in sevenths on short texts).
SECOND_SHARE = 0.2


# A text's language is told from its first SAMPLE_CHARS characters: far more than either
# identifier needs to be sure, and a runaway 10 MB output is judged in milliseconds.
SAMPLE_CHARS = 20_000
NOT_CHECKED = "not-checked"  # the text's language is one the identifier does not know


class LanguageID(Protocol):
    name: str
    languages: frozenset[str]  # the codes it can answer

    def detect(
        self, texts: Iterable[str], expected: Iterable[str | None] | None = None
    ) -> list[str]:
        """One ISO 639-1 code (or "und") per text; where `expected` names the language a
        text should be in, that language unless another is clearly more likely."""


def too_short(text: str) -> bool:
    return letter_count(text) < MIN_LETTERS


@cache
def canonical(code: str) -> str:
    """An identifier's answer as gen.languages writes it ("nb" is "no", "tl" is "fil")."""

    try:
        return get_language(code).code
    except InputError:
        return code


def checkable(identifier: LanguageID, language: str | None) -> bool:
    """Whether `identifier` can tell a text in `language` (a known, non-empty code)."""
    return bool(language) and language in identifier.languages


def choose(confidences: list[tuple[str, float]], expected: str | None) -> str:
    """The answer from (code, confidence) pairs ranked best first: the expected language
    when it has EXPECTED_SHARE of the top confidence, else the top language."""
    if not confidences or confidences[0][1] <= 0:
        return UNDETERMINED
    top_code, top = confidences[0]
    if expected is not None and expected != top_code:
        share = dict(confidences).get(expected, 0.0)
        if share >= EXPECTED_SHARE * top:
            return expected
    return top_code


# A word that is a code, a number or a gene name (a digit, or a capital after its first
# letter: RB1, MiR-155, NASUWT, DECnet), and a capitalised word that does not start a
# sentence (a name: "Pogba", "Temüjin") say nothing of the language around them.
_CODE = re.compile(r"\d|\w[A-Z]")
_OPENERS = "¿¡\"'«„“(["


def plain_words(text: str) -> str:
    """`text` without its codes, numbers and names (see _CODE), for a second look."""
    kept = []
    starts = True
    for word in text.split():
        name = not starts and word.lstrip(_OPENERS)[:1].isupper()
        if not name and not _CODE.search(word):
            kept.append(word)
        starts = word.endswith((".", "!", "?", ":"))
    return " ".join(kept)


def _expected(texts: list[str], expected: Iterable[str | None] | None) -> list[str | None]:
    wanted: list[str | None] = [None] * len(texts) if expected is None else list(expected)
    if len(wanted) != len(texts):
        raise ValueError("one expected language per text, or none at all")
    return wanted


# A text mostly in a script its expected language is not written in is in another language,
# whatever an identifier says: lingua knows no language written in Ethiopic, for one, and
# answers "und" for Amharic. Letters are told apart by their Unicode names' first word.
_SCRIPT_NAMES = {
    "Latn": ("LATIN",), "Cyrl": ("CYRILLIC",), "Grek": ("GREEK",), "Arab": ("ARABIC",),
    "Hebr": ("HEBREW",), "Ethi": ("ETHIOPIC",), "Deva": ("DEVANAGARI",),
    "Beng": ("BENGALI",), "Guru": ("GURMUKHI",), "Gujr": ("GUJARATI",), "Orya": ("ORIYA",),
    "Taml": ("TAMIL",), "Telu": ("TELUGU",), "Knda": ("KANNADA",), "Mlym": ("MALAYALAM",),
    "Sinh": ("SINHALA",), "Thai": ("THAI",), "Laoo": ("LAO",), "Mymr": ("MYANMAR",),
    "Khmr": ("KHMER",), "Tibt": ("TIBETAN",), "Geor": ("GEORGIAN",), "Armn": ("ARMENIAN",),
    "Hans": ("CJK",), "Hant": ("CJK",), "Jpan": ("CJK", "HIRAGANA", "KATAKANA"),
    "Kore": ("HANGUL", "CJK"),
}  # fmt: skip
# languages commonly written in a second script besides the one langcodes gives first
_ALSO_WRITTEN = {"sr": "Latn", "bs": "Cyrl", "uz": "Latn", "az": "Latn", "kk": "Latn",
                 "tk": "Latn", "ku": "Latn", "pa": "Arab", "ms": "Arab", "sd": "Deva"}  # fmt: skip
SCRIPT_SHARE = 0.5  # below this share of its letters in the expected scripts, a text is not


@cache
def _expected_scripts(language: str) -> frozenset[str]:
    """The scripts (`_SCRIPT_NAMES` codes) whose letters count as written in `language`
    (empty: unknown)."""
    import langcodes

    try:
        script = langcodes.Language.get(language).maximize().script
    except (ValueError, LookupError):
        return frozenset()
    names = set(_SCRIPT_NAMES.get(script or "", ()))
    names.update(_SCRIPT_NAMES.get(_ALSO_WRITTEN.get(language, ""), ()))
    return frozenset(code for code, own in _SCRIPT_NAMES.items() if names & set(own))


@cache
def _script_of(ch: str) -> str | None:
    """The script of an alphabetic character, as `_SCRIPT_NAMES` names it, or None."""
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "").split(" ", 1)[0]
    return next((code for code, names in _SCRIPT_NAMES.items() if name in names), None)


def foreign_script(text: str, language: str) -> str | None:
    """ "und-<Script>" when most of `text`'s letters are in one script `language` is not
    written in (an undetermined language, in that script), else None."""
    accepted = _expected_scripts(language)
    if not accepted or too_short(text):
        return None
    counts: dict[str, int] = {}
    inside = total = 0
    for ch in text:
        code = _script_of(ch)
        if code is None:
            continue
        total += 1
        if code in accepted:
            inside += 1
        else:
            counts[code] = counts.get(code, 0) + 1
    if not total or inside >= SCRIPT_SHARE * total or not counts:
        return None
    return f"{UNDETERMINED}-{max(counts, key=lambda c: counts[c])}"


def _check_scripts(texts: list[str], wanted: list[str | None], codes: list[str]) -> None:
    """Replace an answer that is the expected language, or "und", by "und-<Script>" when
    the text is mostly in a script the expected language is not written in."""
    for i, (text, language) in enumerate(zip(texts, wanted, strict=True)):
        if language is not None and codes[i] in (language, UNDETERMINED):
            codes[i] = foreign_script(text, language) or codes[i]


class Langdetect:
    """langdetect, seeded so that its sampling gives one answer per text."""

    name = "langdetect"

    def __init__(self, seed: int = 0) -> None:
        from langdetect import DetectorFactory
        from langdetect.detector_factory import init_factory

        DetectorFactory.seed = seed
        init_factory()
        from langdetect.detector_factory import _factory

        self.languages = frozenset(canonical(c.split("-")[0]) for c in _factory.get_lang_list())

    def ranked(self, text: str) -> list[tuple[str, float]]:
        """(code, probability) pairs best first; none when langdetect gives up."""
        from langdetect import detect_langs
        from langdetect.lang_detect_exception import LangDetectException

        try:
            guesses = detect_langs(text)
        except LangDetectException:
            return []
        # zh-cn, zh-tw -> zh (their probabilities add up)
        merged: dict[str, float] = {}
        for guess in guesses:
            code = canonical(guess.lang.split("-")[0])
            merged[code] = merged.get(code, 0.0) + guess.prob
        return sorted(merged.items(), key=lambda kv: -kv[1])

    def detect(
        self, texts: Iterable[str], expected: Iterable[str | None] | None = None
    ) -> list[str]:
        texts = [t[:SAMPLE_CHARS] for t in texts]
        wanted = _expected(texts, expected)
        codes = []
        for text, language in zip(texts, wanted, strict=True):
            if too_short(text):
                codes.append(UNDETERMINED)
                continue
            ranked = self.ranked(text)
            codes.append(choose(ranked, language) if ranked else UNDETERMINED)
        _check_scripts(texts, wanted, codes)
        return codes


class Lingua:
    """lingua-language-detector over all its languages, in two passes.

    The fast low-accuracy models answer first; a text whose answer they give with less
    than FAST_CONFIDENCE, or that contradicts the expected language, goes to the full
    models. On the STS Benchmark sentences in six
    languages this gave 98.3% right against the full models' 98.5%, at about four times
    their speed (bench/bench_langid.py).
    """

    name = "lingua"
    FAST_CONFIDENCE = 0.995

    def __init__(self) -> None:
        try:
            from lingua import Language, LanguageDetectorBuilder
        except ImportError:
            raise InputError(
                "language ID with lingua needs the lingua-language-detector package: "
                "pip install lingua-language-detector"
            ) from None
        builder = LanguageDetectorBuilder.from_all_languages
        self._fast: Any = builder().with_low_accuracy_mode().build()
        self._full: Any = builder().build()
        self.languages = frozenset(
            canonical(lang.iso_code_639_1.name.lower()) for lang in Language.all()
        )
        self._langdetect: Langdetect | None = None  # the second opinion, loaded when needed

    def detect(
        self, texts: Iterable[str], expected: Iterable[str | None] | None = None
    ) -> list[str]:
        texts = [t[:SAMPLE_CHARS] for t in texts]
        wanted = _expected(texts, expected)
        codes = [UNDETERMINED] * len(texts)
        judged = [i for i, t in enumerate(texts) if not too_short(t)]
        ranked = self._fast.compute_language_confidence_values_in_parallel(
            [texts[i] for i in judged]
        )
        unsure = []
        for i, values in zip(judged, ranked, strict=True):
            pairs = _pairs(values)
            # The fast models can be sure and wrong about short texts: an answer that
            # contradicts the expected language goes to the full models too.
            agrees = wanted[i] is None or (pairs and pairs[0][0] == wanted[i])
            if pairs and pairs[0][1] >= self.FAST_CONFIDENCE and agrees:
                codes[i] = pairs[0][0]
            else:
                unsure.append(i)
        full = self._full.compute_language_confidence_values_in_parallel([texts[i] for i in unsure])
        for i, values in zip(unsure, full, strict=True):
            codes[i] = choose(_pairs(values), wanted[i])
        self._second_look(texts, wanted, codes)
        _check_scripts(texts, wanted, codes)
        return codes

    def _second_look(self, texts: list[str], wanted: list[str | None], codes: list[str]) -> None:
        """Turn into "und" each answer that contradicts the expected language but that
        lingua on the text's plain words, or langdetect on the whole text, does not
        back: a wrong language is reported only when all three agree it is wrong."""
        contested = [
            i
            for i, c in enumerate(codes)
            if wanted[i] is not None and c not in (wanted[i], UNDETERMINED)
        ]
        if not contested:
            return
        plain = {i: plain_words(texts[i]) for i in contested}
        plain = {i: p for i, p in plain.items() if not too_short(p)}
        values = self._full.compute_language_confidence_values_in_parallel(list(plain.values()))
        for i, v in zip(plain, values, strict=True):
            if choose(_pairs(v), wanted[i]) == wanted[i]:
                codes[i] = UNDETERMINED
        if self._langdetect is None:
            self._langdetect = Langdetect()
        for i in contested:
            if codes[i] == UNDETERMINED:
                continue
            ranked = self._langdetect.ranked(texts[i])
            share = dict(ranked).get(wanted[i] or "", 0.0)
            if not ranked or share >= SECOND_SHARE * ranked[0][1]:
                codes[i] = UNDETERMINED


def _pairs(values: Any) -> list[tuple[str, float]]:
    merged: dict[str, float] = {}  # Bokmål and Nynorsk are both Norwegian
    for v in values:
        code = canonical(v.language.iso_code_639_1.name.lower())
        merged[code] = merged.get(code, 0.0) + float(v.value)
    return sorted(merged.items(), key=lambda kv: -kv[1])


IDENTIFIERS = Registry("language identifier", {"langdetect": Langdetect, "lingua": Lingua})
DEFAULT_IDENTIFIER = "lingua"


def get_identifier(name: str) -> LanguageID:
    cls = IDENTIFIERS.load(name)
    identifier: LanguageID = cls()
    return identifier
