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


# Quote marks and invisible characters an output may hold around nothing at all.
_QUOTES = "\"'`\u00ab\u00bb\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2039\u203a\u300c\u300d"
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"
_BRACKETS = "[](){}<>\u3010\u3011"
_WORD = re.compile(r"\w+")


def _bare(text: str) -> str:
    """`text` without whitespace, invisible characters and the quote marks around it."""
    for char in _INVISIBLE:
        text = text.replace(char, "")
    previous = None
    while previous != text:
        previous = text
        text = text.strip().strip(_QUOTES)
    return text


def _words(text: str) -> list[str]:
    """Case-folded words, punctuation and spacing ignored; each character of an unspaced
    script a word of its own."""
    return _WORD.findall(_UNSPACED.sub(r" \g<0> ", text.casefold()))


def empty(case: Case) -> bool:
    """Nothing but whitespace, invisible characters and quote marks."""
    return not _bare(case.output)


def identical(case: Case) -> bool:
    """The input's words again: case, quote marks, spacing and punctuation ignored."""
    out = _bare(case.output)
    if not out:
        return False
    words = _words(out)
    if not words:  # punctuation only: compare the text itself
        return out.casefold() == _bare(case.source).casefold()
    return words == _words(case.source)


# An output that is only a placeholder: a short bracketed token ("[paraphrase]",
# "<output>", "(no output)"; not a JSON object, which is json-fragment's) or a word that
# says there is no content.
_BRACKETED = re.compile(r"^[\[<({\u3010][^\[\]<>(){}\n:\"]{0,40}[\]>)}\u3011]$")
_NO_CONTENT = frozenset(
    (
        *("n/a", "na", "n.a.", "none", "null", "nil", "nan", "undefined", "todo", "tbd"),
        *("tba", "tbc", "empty", "blank", "placeholder", "nothing", "-", "--", "?"),
        *("\u2014", "\u2013", "no output", "no text", "no answer", "no response"),
    )
)


def ellipsis(case: Case) -> bool:
    """Only dots (spaced or bracketed), or only a placeholder."""
    out = _bare(case.output)
    dots = re.sub(r"[\s\[\](){}<>]", "", out)
    if dots and set(dots) <= {".", "\u2026"}:
        return True
    if _BRACKETED.match(out) and len(out.split()) <= 6:
        return True
    return out.casefold().rstrip(".!") in _NO_CONTENT


# A Markdown code fence around the output, or a bare language label on its first line.
_FENCE = re.compile(r"^```[\w-]*\s*\n?(.*?)\n?```$", re.DOTALL)
_LABEL_LINE = re.compile(r"^(?:json|jsonl|javascript|js)\s*\n", re.IGNORECASE)
# a JSON member without its braces: "key": value
_MEMBER = re.compile(r'^"[^"\n]{1,40}"\s*:\s*["\[{\d-]|^"[^"\n]{1,40}"\s*:\s*(?:true|false|null)\b')


def json_fragment(case: Case) -> bool:
    """A JSON object, array or member, bare or in a code fence."""
    out = case.output.strip()
    fenced = _FENCE.match(out)
    if fenced:
        out = fenced.group(1).strip()
    out = _LABEL_LINE.sub("", out).lstrip()
    return out.startswith(("{", "[")) or bool(_MEMBER.match(out))


# Reasoning talk a rewrite of a text does not hold unless its input does: a tag around
# it, numbered steps, a label naming it, an opening "Hmm", or a sentence where the writer
# (or "the user") talks about the task.
_TAG = re.compile(r"</?[a-z][\w-]{0,20}>", re.IGNORECASE)
_STEPS = re.compile(r"(?:^|\n)\s*1[.)]\s[^\n]*\n\s*2[.)]\s")
_PROCESS_LABEL = re.compile(
    r"^\s*(?:thoughts?|thinking|reasoning|analysis|plan|approach|gedanken?|überlegung|"
    r"analyse|pensamiento|razonamiento|análisis|réflexion|pensée|raisonnement)\s?:",
    re.IGNORECASE,
)
_HESITATION = re.compile(
    r"^\s*(?:(?:hmm+|hm+|umm*|uh+)[,.!\u2026]|(?:okay|ok|alright|right),\s+so\b)", re.I
)
_SELF = re.compile(
    r"(?:^|\W)(?:i|i'm|i'll|i've|i'd|me|my|we|let's|let me|the user|ich|mich|mir|wir|"
    r"der nutzer|der benutzer|yo|tengo que|debo|voy a|necesito|el usuario|je|j'|nous|moi|"
    r"l'utilisateur|primero|luego|zuerst|d'abord|ensuite)(?=\W|$)"
)
_TASK = re.compile(
    r"paraphras|rewrit|reword|rephras|reformul|umformulier|reescrib|réécri|translat|übersetz|"
    r"tradu|summar|zusammenfass|resum(?:ir|o|en)\b|résum|sentence|satz|frase|phrase|meaning|bedeutung|"
    r"main idea|hauptaussage|idea principal|idée principale|break (?:this|it) down"
)
_SENTENCES = re.compile(r"(?<=[.!?:])\s+|\n+")


def reasoning_leak(case: Case) -> bool:
    """A reasoning marker, or reasoning talk (see above) that the input does not hold."""
    lowered = case.output.lower()
    source = case.source.lower()
    if any(m in lowered and m not in source for m in _markers("reasoning")):
        return True
    tags = {t.lower() for t in _TAG.findall(case.output)} - {
        t.lower() for t in _TAG.findall(case.source)
    }
    if tags or (_STEPS.search(case.output) and not _STEPS.search(case.source)):
        return True
    for pattern in (_PROCESS_LABEL, _HESITATION):
        if pattern.match(case.output) and not pattern.match(case.source):
            return True
    # both the self-reference and the task word new: an input in the first person ("How
    # do I ...") rewritten with a task word is not reasoning
    own = {m.strip(' \t\n.,;:!?()"') for m in _SELF.findall(source)}
    for sentence in _SENTENCES.split(lowered):
        if not sentence or sentence in source:
            continue
        selves = {m.strip(' \t\n.,;:!?()"') for m in _SELF.findall(sentence)} - own
        task = _TASK.search(sentence)
        if selves and task and task.group(0) not in source:
            return True
    return False


# A short label before a colon that opens the output and names what follows ("Rewritten:",
# "Revised sentence:", "Here you go:", "Reformulation :"), or an assistant's opener, where
# the input opens with neither. A label naming a topic ("Brexit: ...") is a headline's.
_LABEL = re.compile(r"^([^\n:]{1,60}?\w[!.)]?)[ \u00a0]?:\s+\S")
LABEL_WORDS = 6
_ABOUT_OUTPUT = re.compile(
    r"paraphras|paráfras|rewrit|reword|rephras|revis|reformul|umformul|reescri|réécri|"
    r"\bversion|versión|translat|übersetz|traduc|summar|zusammenfass|resumen|résumé|"
    r"\btext|sentence|\bsatz|\bfrase|\bphrase|output|result|answer|antwort|respuesta|"
    r"réponse|\bhere\b|\bhier ist|aquí tienes|aquí está|\bvoici|\bvoilà|\bsure\b|"
    r"of course|certainly|gerne|natürlich|por supuesto|claro|bien sûr",
    re.IGNORECASE,
)
_OPENER = re.compile(
    r"^\s*(?:(?:sure|certainly|of course|absolutely|gladly|okay|ok|alright|gerne|klar|"
    r"natürlich|selbstverständlich|claro|por supuesto|vale|bien sûr|d'accord|certes)\s?[,!.:]"
    r"|(?:here(?:'s| is| are)|hier ist|aquí tienes|aquí está|voici)\b)",
    re.IGNORECASE,
)


def _label(text: str, about_output: bool = True) -> str | None:
    """The short label before a colon that opens `text` (one naming the output only, when
    `about_output`), or None."""
    found = _LABEL.match(text.strip())
    if not found or len(found.group(1).split()) > LABEL_WORDS:
        return None
    if about_output and not _ABOUT_OUTPUT.search(found.group(1)):
        return None
    return found.group(1)


@cache
def _prompt_fragments() -> tuple[str, ...]:
    """The fixed parts (four words or more) of gen's packaged prompts, lower-cased: an
    output holding one echoes the instruction."""
    fragments: set[str] = set()
    for path in resources.files("shiftbench").joinpath("prompts").iterdir():
        if not path.name.endswith(".txt"):
            continue
        for sentence in re.split(r"(?<=[.:;])\s+", path.read_text("utf-8").lower()):
            for part in re.split(r"\{\w+\}", sentence):
                if len(part.split()) >= 4:
                    fragments.add(part.strip())
    return tuple(sorted(fragments))


def prefix_leak(case: Case) -> bool:
    """A prefix marker, a short label or an assistant's opener (see above), or a piece of
    gen's own prompt, that the input does not open with (hold, for the prompt)."""
    lowered = case.output.strip().lower()
    source = case.source.strip().lower()
    if any(lowered.startswith(m) and not source.startswith(m) for m in _markers("prefix")):
        return True
    # an input that opens with a label of its own (a headline's topic) may keep it
    if _label(case.output) is not None and _label(case.source, False) is None:
        return True
    if _OPENER.match(case.output) and not _OPENER.match(case.source):
        return True
    return any(f in lowered and f not in source for f in _prompt_fragments())


def wrong_language(case: Case) -> bool:
    """Language ID found a language, and not the one the output should be in."""
    if case.language is None or case.detected in (None, "und"):
        return False
    return case.detected != case.language


REPEAT_WORDS = 8  # a run of this many words (fewer for a shorter input) said again


def _tokens(text: str) -> list[str]:
    """Lower-cased words, each character of an unspaced script a word of its own."""
    return _UNSPACED.sub(r" \g<0> ", text.lower()).split()


def _most_repeated(words: list[str], n: int) -> int:
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - n + 1):
        gram = tuple(words[i : i + n])
        counts[gram] = counts.get(gram, 0) + 1
    return max(counts.values(), default=0)


def runaway(case: Case) -> bool:
    """Over RUNAWAY_FACTOR times the input's words, or a run of words said again that the
    input does not repeat: REPEAT_WORDS words twice, or a shorter input's length three
    times (not for expansion and summarised expansion)."""
    if case.transform in LONGER_BY_DESIGN:
        return False
    if word_count(case.output) > RUNAWAY_FACTOR * max(1, word_count(case.source)):
        return True
    source = _tokens(case.source)
    n = min(REPEAT_WORDS, max(2, len(source)))
    times = 2 if n == REPEAT_WORDS else 3
    return _most_repeated(_tokens(case.output), n) >= times > _most_repeated(source, n)


# The end of a sentence: a full stop, question or exclamation mark, maybe followed by
# closing quotes or brackets. Besides the Latin marks and the ellipsis: the CJK and
# fullwidth ones, Arabic's question mark and Urdu's full stop, Devanagari's danda and double
# danda, Ethiopic's full stop and question mark (Amharic), Armenian's full stop, Myanmar's
# and Khmer's.
_SENTENCE_END = re.compile(
    "[.!?\u2026\u3002\uff0e\uff01\uff1f\u061f\u06d4\u0964\u0965\u1362\u1367\u0589"
    "\u104b\u17d4][\"'\u2019\u201d\u00bb)\\]]*$"
)


_END_PUNCT = ".,;:!?" + _QUOTES + "()[]"


def truncated(case: Case) -> bool:
    """Cut at the token budget, or under TRUNCATED_SHARE of the input's words (summaries of
    inputs over SHORT_INPUT_WORDS words exempt), or shorter than an input that ends a
    sentence while it stops mid-sentence itself, on a word the input goes on after."""
    if case.finish_reason == "length":
        return True
    if not case.output.strip():
        return False  # that is `empty`
    source_words = word_count(case.source)
    if case.transform in SUMMARIES and source_words > SHORT_INPUT_WORDS:
        return False
    output_words = word_count(case.output)
    if output_words < TRUNCATED_SHARE * source_words:
        return True
    if output_words >= source_words or _SENTENCE_END.search(case.output.strip()):
        return False
    if not _SENTENCE_END.search(case.source.strip()):
        return False  # a headline or a title: a shorter one is no sign of a cut
    # it stops on a word after which the input goes on
    source = [w.strip(_END_PUNCT) for w in _tokens(case.source)]
    last = _tokens(case.output)[-1].strip(_END_PUNCT)
    return last in source[:-1] and last != source[-1]


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
