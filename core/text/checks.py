"""Automatic error checks: one small function per failure, no LLM needed.

A check looks at one `Case` (input text, output text, transform, the language the output
should be in, the backend's finish reason) and answers whether the output fails it.
Checks are independent: one output may fail several. gen regenerates outputs that fail the
checks in GEN_CHECKS; validate reports every check. Marker lists are data (markers.json)
and can be extended with a user's own file of the same shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from shiftbench.core.data.runfolder import IDENTITY_KEPT
from shiftbench.core.registry import Registry
from shiftbench.errors import InputError

LONGER_BY_DESIGN = ("expansion", "summarised-expansion")
SUMMARIES = ("summarisation",)
TRANSLATIONS = ("translation", "cross-translation")
RUNAWAY_FACTOR = 5  # output words over input words
TRUNCATED_SHARE = 0.2  # output words under this share of the input words
SHORT_INPUT_WORDS = 3  # summaries of longer inputs may be short

# Scripts written without spaces between words: each character counts as a word.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")


@dataclass(frozen=True)
class Case:
    """One output to judge. `language` is the ISO 639-1 code the output should be in (the
    target of a translation, else the input's own); `detected` is what language ID found
    in the output ("und" when it cannot tell), filled in only for the wrong-language check.
    """

    source: str
    output: str
    transform: str
    language: str | None = None
    detected: str | None = None
    finish_reason: str | None = None


Check = Callable[[Case], bool]


def word_count(text: str) -> int:
    """Whitespace-separated words, with each character of an unspaced script (Chinese,
    Japanese, Thai, Korean syllables) counted as a word of its own."""
    unspaced = len(_UNSPACED.findall(text))
    if not unspaced:
        return len(text.split())
    return len(_UNSPACED.sub(" ", text).split()) + unspaced


@cache
def markers(extra: str | None = None) -> dict[str, tuple[str, ...]]:
    """Lower-cased marker phrases per kind, all languages together, plus a user's file."""
    text = resources.files("shiftbench").joinpath("markers.json").read_text("utf-8")
    tables = [json.loads(text)]
    if extra is not None:
        tables.append(_marker_file(Path(extra)))
    merged: dict[str, set[str]] = {}
    for table in tables:
        for kind, by_language in table.items():
            for phrases in by_language.values():
                merged.setdefault(kind, set()).update(p.lower() for p in phrases)
    return {kind: tuple(sorted(phrases)) for kind, phrases in merged.items()}


def _marker_file(path: Path) -> dict[str, dict[str, list[str]]]:
    """A user's marker file, checked: an object of kind -> language -> list of phrases
    (the packaged markers.json's shape). Anything else is one InputError naming the file
    and what is wrong, before any row is checked."""

    def wrong(why: str) -> InputError:
        return InputError(f"marker file {path} is not a marker table ({why})")

    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"marker file {path} does not exist") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise wrong(f"not JSON: {exc}") from None
    if not isinstance(table, dict):
        raise wrong("not an object of kind -> language -> list of phrases")
    packaged = resources.files("shiftbench").joinpath("markers.json").read_text("utf-8")
    known = set(json.loads(packaged))
    for kind, by_language in table.items():
        if kind not in known:
            raise wrong(f"unknown kind {kind!r}; known: {', '.join(sorted(known))}")
        if not isinstance(by_language, dict):
            raise wrong(f"{kind} is not an object of language -> list of phrases")
        for language, phrases in by_language.items():
            if not isinstance(phrases, list) or not all(
                isinstance(p, str) and p.strip() for p in phrases
            ):
                raise wrong(f"{kind}.{language} is not a list of non-empty phrases")
    return table


_EXTRA_MARKERS: list[str | None] = [None]


def use_markers(extra: str | None) -> None:
    """Make the leak checks also use a user's marker file (None: the packaged ones only)."""
    markers(extra)  # read it now, so a bad file fails before any row is checked
    _EXTRA_MARKERS[0] = extra


def _markers(kind: str) -> tuple[str, ...]:
    return markers(_EXTRA_MARKERS[0]).get(kind, ())


def empty(case: Case) -> bool:
    return not case.output.strip()


def identical(case: Case) -> bool:
    out = case.output.strip()
    return bool(out) and out.lower() == case.source.strip().lower()


def ellipsis(case: Case) -> bool:
    return case.output.strip() in ("...", "..", "…")


def json_fragment(case: Case) -> bool:
    return case.output.lstrip().startswith(("{", "["))


def reasoning_leak(case: Case) -> bool:
    lowered = case.output.lower()
    source = case.source.lower()
    return any(m in lowered and m not in source for m in _markers("reasoning"))


def prefix_leak(case: Case) -> bool:
    lowered = case.output.strip().lower()
    source = case.source.strip().lower()
    return any(lowered.startswith(m) and not source.startswith(m) for m in _markers("prefix"))


def wrong_language(case: Case) -> bool:
    """Language ID found a language, and not the one the output should be in."""
    if case.language is None or case.detected in (None, "und"):
        return False
    return case.detected != case.language


def runaway(case: Case) -> bool:
    if case.transform in LONGER_BY_DESIGN:
        return False
    return word_count(case.output) > RUNAWAY_FACTOR * max(1, word_count(case.source))


def truncated(case: Case) -> bool:
    if case.finish_reason == "length":
        return True
    if not case.output.strip():
        return False  # that is `empty`
    source_words = word_count(case.source)
    if case.transform in SUMMARIES and source_words > SHORT_INPUT_WORDS:
        return False
    return word_count(case.output) < TRUNCATED_SHARE * source_words


def summary_too_long(case: Case) -> bool:
    return case.transform in SUMMARIES and word_count(case.output) > word_count(case.source)


CHECKS = Registry(
    "check",
    {
        "empty": empty,
        "identical": identical,
        "ellipsis": ellipsis,
        "json-fragment": json_fragment,
        "reasoning-leak": reasoning_leak,
        "prefix-leak": prefix_leak,
        "wrong-language": wrong_language,
        "runaway": runaway,
        "truncated": truncated,
        "summary-too-long": summary_too_long,
    },
)
GEN_CHECKS = ("empty", "identical", "reasoning-leak", "prefix-leak", "runaway")

# English negation cues: a negation must change how many a text has; an affirmative
# paraphrase is made only of a text that has one, and must have none. "No." before a
# number is the abbreviation of "number" ("debuted at No. 6"), not a cue: in MRPC, 27
# texts had it as their only "cue".
_NEGATION_CUES = re.compile(
    r"\b(?:not|no(?!\.\s*\d)|never|none|nobody|nothing|neither|nor|nowhere|without|cannot)\b"
    r"|n['\u2019]t\b",
    re.IGNORECASE,
)


def negation_cues(text: str) -> int:
    """How many English negation cues `text` has."""
    return len(_NEGATION_CUES.findall(text))


def not_negated(case: Case) -> bool:
    """A negation control's output (English, or a language not known) with as many
    negation cues as its input: most likely reworded rather than negated."""
    if case.transform != "negation" or case.language not in (None, "en"):
        return False
    if not case.output.strip():
        return False  # that is `empty`
    return negation_cues(case.output) == negation_cues(case.source)


def still_negated(case: Case) -> bool:
    """An affirmative paraphrase (English, or a language not known) that still has a
    negation cue."""
    if case.transform != "affirmative-paraphrase" or case.language not in (None, "en"):
        return False
    return negation_cues(case.output) > 0


# Checks of one transform's outputs only, run by gen but not listed by validate.
TRANSFORM_CHECKS: dict[str, dict[str, Check]] = {
    "negation": {"not-negated": not_negated},
    "affirmative-paraphrase": {"still-negated": still_negated},
}


def gen_checks(transform: str) -> tuple[str, ...]:
    """The checks gen runs on a transform's outputs (and retries on). An unchanged output
    of a transform in IDENTITY_KEPT is a result, not a failure."""
    kept = ("identical",) if transform in IDENTITY_KEPT else ()
    own = tuple(c for c in GEN_CHECKS if c not in kept)
    return own + tuple(TRANSFORM_CHECKS.get(transform, {}))


def failures(case: Case, names: tuple[str, ...] | None = None) -> list[str]:
    """Every check in `names` (default: all) that the output fails, in registry order."""
    return [name for name in (names or tuple(CHECKS)) if CHECKS[name](case)]


def first_failure(
    source: str, output: str, transform: str, names: tuple[str, ...], language: str | None = None
) -> str | None:
    """The name of the first check in `names` that the output fails, or None."""
    case = Case(source, output, transform, language)
    found = {**CHECKS, **TRANSFORM_CHECKS.get(transform, {})}
    return next((name for name in names if found[name](case)), None)
