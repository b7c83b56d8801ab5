"""`shiftbench validate` on run folders written by gen: reports, gating, bad input."""

from __future__ import annotations

import pytest

from shiftbench.core.text.langid import UNDETERMINED, get_identifier


@pytest.mark.parametrize("name", ["lingua", "langdetect"])
def test_language_id_is_deterministic_and_leaves_short_texts_undetermined(name):
    texts = [
        "Der Zug nach Lyon fuhr zwanzig Minuten zu spät ab.",
        "القطار إلى ليون غادر متأخرا عشرين دقيقة.",
        "Lyon treni yirmi dakika geç kalktı.",  # noqa: RUF001 (Turkish dotless i)
        "Hola",
        "ok ok",
    ]
    first = get_identifier(name).detect(texts)
    assert first == ["de", "ar", "tr", UNDETERMINED, UNDETERMINED]
    for _ in range(5):
        assert get_identifier(name).detect(texts) == first


def test_expected_language_wins_when_the_identifier_is_torn():
    from shiftbench.core.text.langid import choose

    assert choose([("is", 0.40), ("en", 0.30)], "en") == "en"  # 0.30 >= half of 0.40
    assert choose([("cy", 0.80), ("en", 0.10)], "en") == "cy"
    assert choose([("is", 0.40), ("en", 0.30)], None) == "is"
    assert choose([("de", 0.90)], "en") == "de"  # not even among the candidates
    assert choose([], "en") == UNDETERMINED


@pytest.mark.parametrize("name", ["lingua", "langdetect"])
def test_short_english_is_not_flagged_when_english_is_expected(name):
    identifier = get_identifier(name)
    texts = [
        "A woman is chopping tofu.",
        "Der Hund schläft im Garten.",
        "Il gatto dorme sul divano.",
    ]
    # lingua alone takes the first for Icelandic; told to expect English it keeps English,
    # while text that is plainly in another language is still named for what it is.
    assert identifier.detect(texts, ["en", "en", "es"]) == ["en", "de", "it"]
    if name == "lingua":
        assert identifier.detect(texts[:1]) == ["is"]
