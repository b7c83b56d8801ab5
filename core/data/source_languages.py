"""The language of each text field of each subset, where a source's metadata does not say.

mteb names a subset's languages, one tag per text field for a cross-lingual subset (STS17
`en-de` is ["eng-Latn", "deu-Latn"]: sentence1 English, sentence2 German). A local folder
says it, in this order of precedence:

1. its README card's `language:` metadata, when it names one language (then every subset
   and field is in it);
2. a subset (config) name that is a language code (`pol`, `pt`, `zh`), with a script or
   region if any (`yor-Latn`, `pt_BR`), or one code per text field joined by "-" or "_"
   (`en-de`: sentence1 English, sentence2 German);
3. language ID over the first DETECT_SAMPLE texts of each field, when most of those it can
   judge are in one language.

`--source-language` overrides all three. Where the answer came from is recorded per subset
(`language_origin` in shiftbench.json).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from shiftbench.core.text.langid import UNDETERMINED, get_identifier
from shiftbench.core.text.languages import get_language
from shiftbench.errors import InputError

CARD = "card"
CONFIG_NAME = "config name"
DETECTED = "detected"
OPTION = "--source-language"
DETECT_SAMPLE = 200  # texts per field that language ID looks at
DETECT_SHARE = 0.5  # of the judged texts, the most frequent language needs more than this


def _code(text: str) -> Any:
    """The language a code or tag names, or None."""

    try:
        return get_language(text)
    except InputError:
        return None


def _clear_code(part: str) -> Any:
    """The language a config-name part names beyond doubt: a two-letter code, or a
    three-letter one of a language that has a two-letter code too (so `all` or `mix`, also
    ISO 639-3 codes, do not count)."""
    if not part.isalpha() or len(part) not in (2, 3):
        return None
    lang = _code(part)
    if lang is None or (len(part) == 3 and len(lang.code) != 2):
        return None
    return lang


def name_languages(name: str, fields: int) -> list[str] | None:
    """The ISO 639-3 codes a subset name spells: one for every field, or one per field."""
    parts = name.replace("_", "-").split("-")
    if len(parts) == 2 and (len(parts[1]) == 4 or parts[1].isupper()):
        lang = _clear_code(parts[0])  # a tag with a script or region: "yor-Latn", "pt_BR"
        return [lang.iso3] if lang is not None else None
    langs = [_clear_code(p) for p in parts]
    if any(lang is None for lang in langs) or len(langs) not in {1, fields}:
        return None
    return [lang.iso3 for lang in langs]


def card_language(meta: dict[str, Any]) -> str | None:
    """The one language a card's `language:` metadata names, if it names exactly one."""
    declared = meta.get("language")
    if isinstance(declared, str):
        declared = [declared]
    if not isinstance(declared, list) or len(declared) != 1:
        return None
    lang = _code(str(declared[0]))
    return lang.iso3 if lang is not None else None


def declared_languages(
    meta: dict[str, Any], subsets: tuple[str, ...], fields: int
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Steps 1 and 2: each subset's languages that the card or its name declares, and
    where each came from."""
    one = card_language(meta)
    languages, origin = {}, {}
    for subset in subsets:
        if one is not None:
            languages[subset], origin[subset] = [one], CARD
            continue
        named = name_languages(subset, fields)
        if named is not None:
            languages[subset], origin[subset] = named, CONFIG_NAME
    return languages, origin


def detect_languages(texts_per_field: list[list[str]]) -> list[str] | None:
    """Step 3: the ISO 639-3 code of each field's texts by language ID (one code when all
    fields agree), or None when a field has no clear majority language."""

    identifier = get_identifier("lingua")
    found = []
    for texts in texts_per_field:
        answers = [a for a in identifier.detect(texts[:DETECT_SAMPLE]) if a != UNDETERMINED]
        if not answers:
            return None
        code, n = Counter(answers).most_common(1)[0]
        if n <= DETECT_SHARE * len(answers):
            return None
        found.append(get_language(code).iso3)
    return found[:1] if len(set(found)) == 1 else found


def field_languages(languages: list[str], fields: tuple[str, ...]) -> tuple[Any, ...]:
    """One language (gen.languages.Language, or None when unknown) per text field, from a
    subset's tags: one tag per field, or the first tag for every field."""
    if not languages:
        return (None,) * len(fields)
    if len(languages) == len(fields):
        return tuple(_code(tag) for tag in languages)
    return (_code(languages[0]),) * len(fields)


def with_detected(source: Any, loaded: dict[str, dict[str, Any]]) -> Any:
    """The source with step 3 done for each subset whose languages are still unknown;
    `loaded` holds each subset's splits as read (before any row limit or shard)."""
    from dataclasses import replace

    missing = [s for s in source.subsets if not source.languages.get(s)]
    if not missing:
        return source
    languages, origin = dict(source.languages), dict(source.language_origin)
    for subset in missing:
        per_field: list[list[str]] = [[] for _ in source.text_fields]
        for split in source.splits:
            ds = loaded[subset][split]
            head = ds.select(range(min(DETECT_SAMPLE, len(ds))))
            for texts, field in zip(per_field, source.text_fields, strict=True):
                # a list-valued field (machine summaries) gives each of its texts
                texts += [x for t in head[field] for x in (t if isinstance(t, list) else [t])
                          if isinstance(x, str)]  # fmt: skip
        found = detect_languages(per_field)
        if found is not None:
            languages[subset], origin[subset] = found, DETECTED
    return replace(source, languages=languages, language_origin=origin)
