"""Every language mteb names, a local folder's own languages, cross-lingual subsets, and the
measures that depend on the script (edit distance, the language ID length floor)."""

from __future__ import annotations

import pytest

from shiftbench.core.text.langid import UNDETERMINED, get_identifier, too_short
from shiftbench.core.text.languages import get_language
from shiftbench.validate.rowchecks import edit_distance


@pytest.mark.parametrize(
    ("code", "iso1", "name"),
    [
        ("arb-Arab", "ar", "Arabic"),  # XQuAD ar: Standard Arabic is the table's Arabic
        ("yor-Latn", "yo", "Yoruba"),
        ("cmn-Hans", "zh", "Chinese"),
        ("pol", "pl", "Polish"),
        ("lin-Latn", "ln", "Lingala"),
        ("pcm-Latn", "pcm", "Nigerian Pidgin"),  # no two-letter code: it keeps its own
        ("nob", "no", "Norwegian"),
        ("pt", "pt", "Portuguese"),
    ],
)
def test_any_iso_639_code_or_mteb_tag_names_a_language(code, iso1, name):
    lang = get_language(code)
    assert (lang.code, lang.name) == (iso1, name)


def test_edit_distance_counts_characters_in_scripts_written_without_spaces():
    # one character of four differs: 1/4 (whitespace would see one word each: 1.0)
    assert edit_distance("我喜欢猫", "我喜欢狗") == 0.25
    # 猫→犬 in six characters
    assert edit_distance("猫が好きです", "犬が好きです") == pytest.approx(1 / 6)
    # Thai: ฉ ั น ช อ บ | แ ม ว against ห ม า: two of nine characters differ
    assert edit_distance("ฉันชอบแมว", "ฉันชอบหมา") == pytest.approx(2 / 9)
    # mixed: "I", "like", "猫" against "I", "like", "狗"
    assert edit_distance("I like 猫", "I like 狗") == pytest.approx(1 / 3)
    assert edit_distance("a cat sleeps", "a dog sleeps") == pytest.approx(1 / 3)


# The first STS Benchmark test sentences in Chinese (the local copy of
# STSBenchmarkMultilingualSTS holds no zh subset; these are translations of its en rows).
SHORT_CHINESE = [
    "一架飞机正在起飞。",
    "一个男人在吹大笛子。",
    "一个男人在披萨上撒奶酪。",
    "三个男人在下棋。",
    "一个男人在拉大提琴。",
    "有人在切洋葱。",
]


@pytest.mark.parametrize("name", ["lingua", "langdetect"])
def test_short_chinese_texts_are_language_checked(name):
    # every one has under twelve letters, the floor that left them undetermined before
    assert all(sum(ch.isalpha() for ch in t) < 12 for t in SHORT_CHINESE)
    assert not any(too_short(t) for t in SHORT_CHINESE)
    identifier = get_identifier(name)
    assert identifier.detect(SHORT_CHINESE, ["zh"] * len(SHORT_CHINESE)) == ["zh"] * 6
    # three Han characters (nine letters' worth) stay too short to judge
    assert identifier.detect(["一只猫"]) == [UNDETERMINED]
