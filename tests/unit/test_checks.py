"""Each automatic check, with outputs that fail it and outputs that pass, in several
languages and scripts."""

from __future__ import annotations

import json

import pytest

from shiftbench.core.text.checks import CHECKS, Case, failures, use_markers, word_count

FAILS = [
    # (check, case)
    ("empty", Case("Un gato duerme.", " \n\t", "paraphrase")),
    ("identical", Case("A cat sleeps.", "  a cat sleeps. ", "paraphrase")),
    ("identical", Case("Кошка спит.", "кошка спит.", "paraphrase")),
    ("identical", Case("القطة نائمة.", " القطة نائمة. ", "style-change")),
    ("ellipsis", Case("A cat sleeps.", "...", "summarisation")),
    ("ellipsis", Case("A cat sleeps.", " … ", "paraphrase")),
    ("json-fragment", Case("A cat sleeps.", '{"paraphrase": "A cat naps."}', "paraphrase")),
    ("json-fragment", Case("Le chat dort.", '["Le chat fait la sieste."]', "paraphrase")),
    ("reasoning-leak", Case("A cat.", "<think>ok</think>A cat naps.", "paraphrase")),
    ("reasoning-leak", Case("A cat.", "Let me think. A feline rests.", "paraphrase")),
    ("reasoning-leak", Case("Le chat.", "Étape 1 : lire. Le félin dort.", "paraphrase")),
    ("reasoning-leak", Case("Die Katze.", "Lass mich nachdenken: Das Tier.", "paraphrase")),
    ("reasoning-leak", Case("The cat.", "الخطوة 1: القطة.", "translation", "ar")),
    ("prefix-leak", Case("A cat sleeps.", "Translation: Un gato duerme.", "translation", "es")),
    ("prefix-leak", Case("A cat sleeps.", "Here is the paraphrase: a cat naps.", "paraphrase")),
    ("prefix-leak", Case("A cat sleeps.", "Traducción: Un gato duerme.", "translation", "es")),
    ("prefix-leak", Case("A cat sleeps.", "Übersetzung: Eine Katze schläft.", "translation")),
    ("prefix-leak", Case("A cat sleeps.", "الترجمة: القطة نائمة.", "translation", "ar")),
    ("prefix-leak", Case("A cat sleeps.", "Çeviri: Kedi uyuyor.", "translation", "tr")),
    ("wrong-language", Case("A cat.", "Un chat.", "translation", "es", detected="fr")),
    ("wrong-language", Case("Un gato.", "A cat.", "paraphrase", "es", detected="en")),
    ("wrong-language", Case("A cat.", "Кошка.", "translation", "ar", detected="ru")),
    ("runaway", Case("one two", "w " * 11, "paraphrase")),
    ("runaway", Case("猫が寝る", "猫" * 30, "paraphrase", "ja")),
    ("truncated", Case("one two three four five six", "one", "paraphrase")),
    (
        "truncated",
        Case("A cat sleeps on the mat.", "A cat sleeps.", "paraphrase", None, None, "length"),
    ),
    ("truncated", Case("Un gato negro duerme aquí.", "Un", "summarisation", None, None, "length")),
    ("truncated", Case("小さな猫が静かに眠っている部屋", "猫", "paraphrase", "ja")),
    (
        "summary-too-long",
        Case("A cat sleeps.", "A small grey cat sleeps soundly.", "summarisation"),
    ),
    (
        "summary-too-long",
        Case("Die Katze schläft.", "Die kleine Katze schläft tief.", "summarisation", "de"),
    ),
    # each failure class by a general rule, phrasings no marker list holds
    ("empty", Case("A cat sleeps.", '""', "paraphrase")),
    ("empty", Case("A cat sleeps.", "\u00ab \u200b\u00bb", "paraphrase")),
    ("identical", Case("A cat sleeps.", "\u201cA cat sleeps!\u201d", "paraphrase")),
    ("identical", Case("Is it late?", "is it late", "paraphrase")),
    ("ellipsis", Case("A cat sleeps.", "[ . . . ]", "paraphrase")),
    ("ellipsis", Case("A cat sleeps.", "<rewritten sentence>", "paraphrase")),
    ("ellipsis", Case("A cat sleeps.", "TBD.", "paraphrase")),
    ("json-fragment", Case("A cat.", '```\n{"text": "A feline."}\n```', "paraphrase")),
    ("json-fragment", Case("A cat.", '"result": "A feline."', "paraphrase")),
    ("reasoning-leak", Case("A cat.", "<reflect>keep it</reflect> A feline.", "paraphrase")),
    ("reasoning-leak", Case("A cat.", "1. Read it\n2. Say it anew\nA feline.", "paraphrase")),
    ("reasoning-leak", Case("A cat.", "Analysis: short. A feline.", "paraphrase")),
    ("reasoning-leak", Case("A cat.", "Hmm. A feline.", "paraphrase")),
    ("reasoning-leak", Case("A cat.", "We must rephrase it. A feline.", "paraphrase")),
    ("reasoning-leak", Case("Le chat.", "Je dois traduire. The cat.", "translation", "en")),
    ("prefix-leak", Case("A cat sleeps.", "Final version: A cat naps.", "paraphrase")),
    ("prefix-leak", Case("A cat sleeps.", "Voilà le texte : Un chat dort.", "translation")),
    ("prefix-leak", Case("A cat sleeps.", "Absolutely! A cat naps.", "paraphrase")),
    (
        "prefix-leak",
        Case("A cat.", "Output only the reworded text.\n\nA feline.", "paraphrase"),  # echoed
    ),
    ("runaway", Case("A cat sleeps.", "A cat naps. A cat naps. A cat naps.", "paraphrase")),
    (
        "runaway",
        Case(
            "one two three four five six seven eight nine ten", "a b c d e f g h " * 2, "paraphrase"
        ),
    ),
    (
        "truncated",
        Case("The cat sleeps on the mat by the door.", "A cat sleeps on the mat by", "paraphrase"),
    ),
    # a sentence ended by Amharic's full stop (U+1362) or Urdu's (U+06D4) is one
    (
        "truncated",
        Case("ድመቷ በበሩ አጠገብ ባለው ምንጣፍ ላይ ትተኛለች።", "ድመቷ በበሩ አጠገብ ባለው ምንጣፍ", "paraphrase", "am"),
    ),
    (
        "truncated",
        Case(
            "بلی دروازے کے پاس چٹائی پر سوتی ہے\u06d4",
            "بلی دروازے کے پاس چٹائی",
            "paraphrase",
            "ur",
        ),
    ),
]

PASSES = [
    ("empty", Case("A cat.", "A feline.", "paraphrase")),
    ("identical", Case("A cat sleeps.", "A cat naps.", "paraphrase")),
    ("identical", Case("Кошка спит.", "Кошка дремлет.", "paraphrase")),
    ("ellipsis", Case("A cat sleeps.", "A cat sleeps...", "paraphrase")),
    ("json-fragment", Case("A cat sleeps.", "A cat naps {quietly}.", "paraphrase")),
    ("reasoning-leak", Case("A cat.", "A feline rests.", "paraphrase")),
    ("reasoning-leak", Case("Step 1: open the box.", "Step 1: open the lid.", "paraphrase")),
    ("reasoning-leak", Case("القطة نائمة.", "القط نائم.", "paraphrase", "ar")),
    ("prefix-leak", Case("Summary: fine.", "Summary: good.", "paraphrase")),
    ("prefix-leak", Case("A cat sleeps.", "Un gato duerme.", "translation", "es")),
    ("prefix-leak", Case("A cat sleeps.", "القطة نائمة.", "translation", "ar")),
    ("wrong-language", Case("A cat.", "Un gato.", "translation", "es", detected="es")),
    ("wrong-language", Case("A cat.", "Kedi.", "translation", "tr", detected="und")),
    ("wrong-language", Case("A cat.", "القطة.", "translation", "ar", detected="ar")),
    ("wrong-language", Case("A cat.", "A cat naps.", "paraphrase", None, detected="fr")),
    ("runaway", Case("one two", "w " * 11, "expansion")),
    ("runaway", Case("one two", "w " * 11, "summarised-expansion")),
    ("runaway", Case("猫が寝る", "猫が静かに寝ている", "paraphrase", "ja")),
    ("truncated", Case("one two three four five six", "one two", "paraphrase")),
    ("truncated", Case("A long sentence about cats and dogs.", "Pets.", "summarisation")),
    ("truncated", Case("A cat.", "", "paraphrase")),  # that is `empty`, not truncation
    ("truncated", Case("小さな猫が眠る", "小さな猫が寝る", "paraphrase", "ja")),
    ("summary-too-long", Case("A cat sleeps soundly.", "A cat sleeps.", "summarisation")),
    ("summary-too-long", Case("A cat.", "A small grey cat.", "paraphrase")),
    # near misses of the general rules
    ("empty", Case("A cat sleeps.", '"Naps."', "paraphrase")),
    ("identical", Case("A cat sleeps.", '"A cat slept!"', "paraphrase")),
    ("ellipsis", Case("A cat sleeps.", "[A cat] sleeps.", "paraphrase")),
    ("ellipsis", Case("A cat.", '{"text": "A cat naps."}', "paraphrase")),
    ("ellipsis", Case("A cat sleeps.", "None of the cats sleep.", "paraphrase")),
    ("json-fragment", Case("A cat sleeps.", '"Naps", said the cat: "always".', "paraphrase")),
    ("reasoning-leak", Case("I lost my card.", "I need a new card.", "paraphrase")),
    ("reasoning-leak", Case("We rewrote the plan.", "We rewrote our plan.", "paraphrase")),
    ("reasoning-leak", Case("<b>A cat</b>", "<b>A feline</b>", "paraphrase")),
    ("reasoning-leak", Case("Um wie viel Uhr?", "Um welche Uhrzeit?", "paraphrase", "de")),
    ("prefix-leak", Case("Brexit talks resume.", "Brexit: talks start again.", "paraphrase")),
    ("prefix-leak", Case("A cat sleeps.", "Sure enough, a cat naps.", "paraphrase")),
    ("prefix-leak", Case("Peau : un mythe", "Texte sur la peau : un mythe", "paraphrase", "fr")),
    ("reasoning-leak", Case("How do I change my PIN?", "How can I rewrite my PIN?", "paraphrase")),
    ("runaway", Case("A cat sleeps.", "A cat naps. A cat naps.", "paraphrase")),
    ("runaway", Case("Go, go, go!", "Go, go, go, go!", "paraphrase")),
    ("truncated", Case("The cat sleeps on the mat.", "A cat naps on a rug", "paraphrase")),
    ("truncated", Case("Cat sleeps on the mat by the door", "Cat sleeps on the mat", "paraphrase")),
    (
        "truncated",
        Case("ድመቷ በበሩ አጠገብ ባለው ምንጣፍ ላይ ትተኛለች።", "ድመቷ ምንጣፍ ላይ ትተኛለች።", "paraphrase", "am"),
    ),
]


@pytest.mark.parametrize(("check", "case"), FAILS)
def test_outputs_that_fail(check, case):
    assert CHECKS[check](case) is True


@pytest.mark.parametrize(("check", "case"), PASSES)
def test_outputs_that_pass(check, case):
    assert CHECKS[check](case) is False


def test_every_check_has_cases_both_ways():
    assert {c for c, _ in FAILS} == set(CHECKS) == {c for c, _ in PASSES}


def test_checks_are_not_exclusive():
    case = Case("A cat sleeps.", "Translation: " + "word " * 40, "paraphrase", "en", "fr")
    assert failures(case) == ["prefix-leak", "wrong-language", "runaway"]


def test_word_count_counts_unspaced_scripts_by_character():
    assert word_count("A cat sleeps.") == 3
    assert word_count("猫が寝る") == 4
    assert word_count("The word 猫 means cat") == 5
    assert word_count("แมวนอน") == 6


def test_user_markers_extend_the_packaged_ones(tmp_path):
    extra = tmp_path / "markers.json"
    extra.write_text(json.dumps({"prefix": {"nl": ["vertaling:"]}}), encoding="utf-8")
    case = Case("A cat sleeps.", "Vertaling: Een kat slaapt.", "translation", "nl")
    assert CHECKS["prefix-leak"](case) is False
    use_markers(str(extra))
    try:
        assert CHECKS["prefix-leak"](case) is True
        assert CHECKS["prefix-leak"](Case("A cat.", "Summary: cat.", "paraphrase")) is True
    finally:
        use_markers(None)


def test_a_negation_must_change_the_negation_cues():
    from shiftbench.core.text.checks import first_failure, gen_checks, negation_cues

    names = gen_checks("negation")
    assert names[-1] == "not-negated" and "not-negated" not in gen_checks("paraphrase")
    source = "The museum is open on Mondays."
    assert first_failure(source, "The museum isn't open on Mondays.", "negation", names) is None
    assert first_failure(source, "The museum is never open.", "negation", names) is None
    assert first_failure("It is not late.", "It is late.", "negation", names) is None
    assert (
        first_failure(source, "On Mondays the museum is open.", "negation", names) == "not-negated"
    )
    # "No." before a number abbreviates "number"; "no." ending a sentence is a cue
    assert negation_cues("The film debuted at No. 6, and World No.2 Hewitt lost.") == 0
    assert negation_cues("The answer was no. No, he did not come.") == 3
    # languages other than English are not judged by English cues
    assert first_failure("Es ist spät.", "Es ist nicht spät.", "negation", names, "de") is None
    assert first_failure("Es ist spät.", "Es ist sehr spät.", "negation", names, "de") is None
