"""Languages: codes, the names prompts use, and seeded draws of target languages.

Any ISO 639-1 or 639-3 code or language tag (mteb's "yor-Latn", "cmn-Hans") names a
language, through the `langcodes` library; the table below holds the languages offered as
translation targets, with the names prompts have always used for them.

Every draw is a pure function of the seed and the row's identity (hash-based, not a
stateful random generator), so it does not change with batch size, order, concurrency,
sharding or resumption.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from shiftbench.errors import InputError


@dataclass(frozen=True)
class Language:
    code: str  # ISO 639-1
    iso3: str  # ISO 639-3, as mteb writes it before the script ("eng" in "eng-Latn")
    name: str  # English name, as prompts say it


LANGUAGES: dict[str, Language] = {
    lang.code: lang
    for lang in [
        Language("am", "amh", "Amharic"),
        Language("ar", "ara", "Arabic"),
        Language("bn", "ben", "Bengali"),
        Language("cs", "ces", "Czech"),
        Language("da", "dan", "Danish"),
        Language("de", "deu", "German"),
        Language("el", "ell", "Greek"),
        Language("en", "eng", "English"),
        Language("es", "spa", "Spanish"),
        Language("fa", "fas", "Persian"),
        Language("fi", "fin", "Finnish"),
        Language("fr", "fra", "French"),
        Language("ha", "hau", "Hausa"),
        Language("he", "heb", "Hebrew"),
        Language("hi", "hin", "Hindi"),
        Language("hu", "hun", "Hungarian"),
        Language("id", "ind", "Indonesian"),
        Language("it", "ita", "Italian"),
        Language("ja", "jpn", "Japanese"),
        Language("ko", "kor", "Korean"),
        Language("nl", "nld", "Dutch"),
        Language("no", "nob", "Norwegian"),
        Language("pl", "pol", "Polish"),
        Language("pt", "por", "Portuguese"),
        Language("ro", "ron", "Romanian"),
        Language("ru", "rus", "Russian"),
        Language("sv", "swe", "Swedish"),
        Language("sw", "swa", "Swahili"),
        Language("th", "tha", "Thai"),
        Language("tr", "tur", "Turkish"),
        Language("uk", "ukr", "Ukrainian"),
        Language("vi", "vie", "Vietnamese"),
        Language("zh", "cmn", "Chinese"),
    ]
}
_BY_ISO3 = {lang.iso3: lang for lang in LANGUAGES.values()} | {"zho": LANGUAGES["zh"]}
# codes the table names otherwise: Norwegian Bokmål and Nynorsk are its Norwegian
_TABLE_ALIASES = {"nb": "no", "nn": "no"}

DEFAULT_POOL = ("es", "fr", "de", "tr", "ar")


def get_language(code: str) -> Language:
    """A language by ISO 639-1 or 639-3 code, or a language tag such as "eng-Latn".

    An individual language of a macrolanguage that the table holds is that entry
    ("arb-Arab" is Arabic, "cmn-Hans" Chinese); any other valid code is a language of its
    own, named in English ("yor-Latn" is Yoruba).
    """
    found = _lookup(code.strip())
    if found is None:
        raise InputError(
            f"unknown language {code!r}: not an ISO 639-1 or 639-3 code or a language tag "
            "such as eng-Latn"
        )
    return found


@cache
def _lookup(code: str) -> Language | None:
    import langcodes

    try:
        tag = langcodes.Language.get(code.replace("_", "-"))
    except (langcodes.LanguageTagError, ValueError):
        return None
    if not tag.language or tag.language in ("und", "mul", "zxx") or not tag.is_valid():
        return None
    own = tag.language
    macro = tag.prefer_macrolanguage().language or own
    for key in (own, macro, _TABLE_ALIASES.get(own)):
        found = LANGUAGES.get(key or "") or _BY_ISO3.get(key or "")
        if found is not None:
            return found
    name = langcodes.Language.get(macro).language_name("en")
    if name.startswith("Unknown language"):
        return None
    try:
        iso3 = langcodes.Language.get(macro).to_alpha3()
    except LookupError:
        return None
    return Language(macro, iso3, name)


def parse_pool(given: str | Sequence[str]) -> tuple[Language, ...]:
    """Language codes (a list, or one comma-separated string), each known and none repeated."""
    text = given if isinstance(given, str) else ",".join(given)  # as the user wrote them
    codes = [c.strip() for c in text.split(",") if c.strip()]
    if not codes:
        raise InputError("the language pool is empty")
    pool = tuple(get_language(c) for c in codes)
    if len({lang.code for lang in pool}) != len(pool):
        raise InputError(f"the language pool {text!r} names a language twice")
    return pool


def draw(pool: tuple[Language, ...], exclude: Language | None, *identity: object) -> Language:
    """One language from `pool` other than `exclude`, fixed by `identity` (seed, row, ...)."""
    choices = [lang for lang in pool if lang != exclude]
    if not choices:
        raise InputError(
            f"the language pool ({', '.join(lang.code for lang in pool)}) has no language "
            f"other than the source language ({exclude.code if exclude else '?'})"
        )
    blob = "\x1f".join(str(part) for part in identity).encode("utf-8")
    index = int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") % len(choices)
    return choices[index]
