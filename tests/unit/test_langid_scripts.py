"""A text mostly written in a script its expected language is not written in is reported
in another language even where the identifier knows no language of that script (lingua
answers "und" for Amharic): measure-checks found 25 of 100 Amharic headlines passing as
English that way."""

from __future__ import annotations

import pytest

from shiftbench.core.text.checks import Case, wrong_language
from shiftbench.core.text.langid import foreign_script, get_identifier

AMHARIC = "የናይጄሪያ ፖሊስ በሩዝ ፋብሪካ ተቆልፎባቸው እንዲሰሩ የተገደዱ 300 ሰራተኞችን"
JAPANESE = "東京は日本の首都であり、多くの人が住んでいます"
RUSSIAN = "Привет, как дела сегодня, мой друг?"


@pytest.mark.parametrize(
    ("text", "language", "found"),
    [
        (AMHARIC, "en", "und-Ethi"),
        (JAPANESE, "en", "und-Jpan"),
        (JAPANESE, "ja", None),
        ("서울은 한국의 수도입니다 그리고 아주 큽니다", "ko", None),
        (RUSSIAN, "sr", None),  # Serbian: both scripts
        ("Zdravo, kako si danas prijatelju?", "sr", None),
        (RUSSIAN, "de", "und-Cyrl"),
        ("The RB1 and MiR-155 levels rose in 300 of 412 samples", "en", None),
        ("Ελλάδα", "en", None),  # too few letters to judge
        ("Der Vortrag über Ελλάδα und Κρήτη war lang und sehr gut", "de", None),  # mostly Latin
    ],
)
def test_a_foreign_script_is_named(text, language, found):
    assert foreign_script(text, language) == found


def test_the_identifier_reports_the_script_and_the_check_fails_it():
    identifier = get_identifier("langdetect")
    detected = identifier.detect(
        [AMHARIC, "A man is riding a horse down a dusty road."], ["en"] * 2
    )
    assert detected == ["und-Ethi", "en"]
    case = Case("A man is riding a horse.", AMHARIC, "paraphrase", "en", detected[0])
    assert wrong_language(case)
