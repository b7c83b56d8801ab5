"""The failures `shiftbench measure-checks` plants into real texts to measure each check's
misses (validate/measure.py): for each check, outputs it must catch, in phrasings of our
own. "{text}" stands for the real text; a phrasing is picked per text in turn, from the
text's language's list (English where it has none). Those marked held-out share nothing
with markers.json, so their miss rate measures what the marker lists do not foresee.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources

from shiftbench.core.text.languages import get_language

KNOWN_PREFIXES = {
    "en": ("Paraphrase: {text}", "Rewritten text: {text}", "Here is the rewritten sentence: {text}",
           "Sure, here it is: {text}", "Certainly! {text}", "Output: {text}",
           "Translation: {text}", "Summary: {text}"),
    "de": ("Übersetzung: {text}", "Zusammenfassung: {text}",
           "Natürlich, hier ist der Text: {text}"),
    "es": ("Traducción: {text}", "Claro, aquí tienes: {text}", "Paráfrasis: {text}"),
    "fr": ("Traduction : {text}", "Bien sûr, voici : {text}", "Paraphrase : {text}"),
}  # fmt: skip
HELD_OUT_PREFIXES = {
    "en": ("Rewritten: {text}", "Here's a paraphrased version: {text}",
           "Paraphrased version: {text}", "Okay, here is the paraphrase: {text}",
           "The paraphrase is: {text}", "Revised sentence: {text}", "Here you go: {text}",
           "Of course! Here it is: {text}", "New version: {text}", "Reworded: {text}"),
    "de": ("Umformulierung: {text}", "Hier ist die umformulierte Version: {text}",
           "Gerne! Hier ist der Text: {text}"),
    "es": ("Texto reescrito: {text}", "Aquí tienes la paráfrasis: {text}", "Por supuesto: {text}"),
    "fr": ("Reformulation : {text}", "Voici une reformulation : {text}",
           "Texte réécrit : {text}"),
}  # fmt: skip
KNOWN_REASONING = {
    "en": ("<think>The user wants a paraphrase. I will reword it.</think>\n{text}",
           "Let me think about how to say this differently. {text}",
           "Step 1: find the key idea. Step 2: reword it.\n{text}",
           "Reasoning: the sentence is simple, so I keep its meaning.\n{text}",
           "Let's think step by step. The meaning must stay. {text}"),
    "de": ("Lass mich nachdenken. Die Aussage bleibt gleich. {text}",
           "Schritt 1: Hauptaussage finden. Schritt 2: umformulieren.\n{text}"),
    "es": ("Déjame pensar. El sentido debe quedar igual. {text}",
           "Paso 1: encontrar la idea. Paso 2: reformularla.\n{text}"),
    "fr": ("Laissez-moi réfléchir. Le sens doit rester le même. {text}",
           "Étape 1 : trouver l'idée. Étape 2 : la reformuler.\n{text}"),
}  # fmt: skip
HELD_OUT_REASONING = {
    "en": ("<thinking>I need to keep the meaning.</thinking>\n{text}",
           "Okay, so the user wants me to rewrite this sentence. {text}",
           "First, I identify the main idea. Then I reword it. {text}",
           "1. Identify the subject\n2. Reword the verb\n3. Final answer: {text}",
           "Hmm, I should keep the numbers unchanged. {text}",
           "Thought: keep it short.\n{text}",
           "Let's break this down: the subject stays, the verb changes. {text}",
           "I think the best paraphrase is: {text}"),
    "de": ("Zuerst erkenne ich die Hauptaussage. Dann formuliere ich sie um. {text}",
           "Okay, ich soll den Satz umformulieren. {text}"),
    "es": ("Primero identifico la idea principal. Luego la reformulo. {text}",
           "Vale, tengo que reescribir la frase. {text}"),
    "fr": ("D'abord, je repère l'idée principale. Ensuite, je la reformule. {text}",
           "Bon, je dois réécrire la phrase. {text}"),
}  # fmt: skip
KNOWN_EMPTY = ("", " ", "\n\n")
HELD_OUT_EMPTY = ('""', "''", "\u00a0\n")
KNOWN_ELLIPSIS = ("...", "…", "..")
HELD_OUT_ELLIPSIS = ("[...]", ". . .", "....")
PLACEHOLDERS = ("[paraphrase]", "N/A", "<paraphrase>", "[Your rewritten text here]", "TODO",
                "None", "null", "(no output)")  # fmt: skip


def _json(key: str) -> Callable[[str], str]:
    return lambda text: json.dumps({key: text}, ensure_ascii=False)


KNOWN_JSON: tuple[Callable[[str], str], ...] = (
    _json("paraphrase"),
    _json("output"),
    lambda text: json.dumps([text], ensure_ascii=False),
)
HELD_OUT_JSON: tuple[Callable[[str], str], ...] = (
    lambda text: "```json\n" + json.dumps({"paraphrase": text}, ensure_ascii=False) + "\n```",
    lambda text: "json\n" + json.dumps({"text": text}, ensure_ascii=False),
    lambda text: '"paraphrase": ' + json.dumps(text, ensure_ascii=False),
)
KNOWN_IDENTICAL: tuple[Callable[[str], str], ...] = (
    lambda text: text,
    lambda text: text.upper(),
    lambda text: f"\n{text}  \n",
)
HELD_OUT_IDENTICAL: tuple[Callable[[str], str], ...] = (
    lambda text: f'"{text}"',
    lambda text: text[:-1] if text.rstrip()[-1:] in ".?!" else text + ".",
)
CUTS = (0.1, 0.5, 0.9)  # share of the words a cut text keeps (at least one)
SUMMARY_PADS = ("In short: {text}", "{text} In other words, this is the main point.")


@dataclass(frozen=True)
class Plant:
    """One kind of planted failure: the check meant to catch it, and the outputs."""

    check: str
    kind: str
    held_out: bool | None  # None: no marker list involved
    make: Callable[[str, str, int], str]  # (text, language, index) -> output
    finish_reason: str | None = None
    transform: str = "paraphrase"


def _cycle(table: dict[str, tuple[str, ...]]) -> Callable[[str, str, int], str]:
    def make(text: str, language: str, i: int) -> str:
        phrasings = table.get(language, table["en"])
        return phrasings[i % len(phrasings)].replace("{text}", text)

    return make


def _pick(outputs: Sequence[str]) -> Callable[[str, str, int], str]:
    return lambda text, language, i: outputs[i % len(outputs)]


def _wrap(wraps: Sequence[Callable[[str], str]]) -> Callable[[str, str, int], str]:
    return lambda text, language, i: wraps[i % len(wraps)](text)


def _cut(share: float) -> Callable[[str, str, int], str]:
    def make(text: str, language: str, i: int) -> str:
        words = text.split()
        return " ".join(words[: max(1, int(len(words) * share))])

    return make


def _echo(text: str, language: str, i: int) -> str:
    """The paraphrase prompt echoed before the answer, in the words gen sends."""
    prompt = resources.files("shiftbench").joinpath("prompts/paraphrase.txt").read_text("utf-8")
    name = get_language(language).name if language else "the language of the original"
    return prompt.replace("{language}", name).replace("{text}", text).strip() + "\n\n" + text


PLANTS: tuple[Plant, ...] = (
    Plant("empty", "empty or whitespace", False, _pick(KNOWN_EMPTY)),
    Plant("empty", "quoted empty, no-break space", True, _pick(HELD_OUT_EMPTY)),
    Plant("identical", "copy (case, spaces)", False, _wrap(KNOWN_IDENTICAL)),
    Plant("identical", "copy in quotes, end mark changed", True, _wrap(HELD_OUT_IDENTICAL)),
    Plant("ellipsis", "ellipsis", False, _pick(KNOWN_ELLIPSIS)),
    Plant("ellipsis", "bracketed or spaced dots", True, _pick(HELD_OUT_ELLIPSIS)),
    Plant("ellipsis", "placeholder ([paraphrase], N/A, ...)", True, _pick(PLACEHOLDERS)),
    Plant("json-fragment", "JSON-wrapped output", False, _wrap(KNOWN_JSON)),
    Plant("json-fragment", "fenced or bare JSON", True, _wrap(HELD_OUT_JSON)),
    Plant("reasoning-leak", "reasoning before the answer", False, _cycle(KNOWN_REASONING)),
    Plant("reasoning-leak", "reasoning before the answer", True, _cycle(HELD_OUT_REASONING)),
    Plant("prefix-leak", "answer prefix", False, _cycle(KNOWN_PREFIXES)),
    Plant("prefix-leak", "answer prefix", True, _cycle(HELD_OUT_PREFIXES)),
    Plant("prefix-leak", "echoed prompt", None, _echo),
    Plant("runaway", "text repeated 10 times", None, lambda t, lang, i: " ".join([t] * 10)),
    Plant(
        "runaway",
        "last 3 words looped 40 times",
        None,
        lambda t, lang, i: " ".join([t, *[" ".join(t.split()[-3:])] * 40]),
    ),
    Plant("runaway", "text repeated 3 times", None, lambda t, lang, i: " ".join([t] * 3)),
    *(
        Plant(
            "truncated",
            f"cut to {share:.0%} of its words, finish_reason length",
            None,
            _cut(share),
            finish_reason="length",
        )
        for share in CUTS
    ),
    *(
        Plant("truncated", f"cut to {share:.0%} of its words, no finish reason", None, _cut(share))
        for share in CUTS
    ),
    Plant(
        "summary-too-long",
        "summary longer than its input",
        None,
        _cycle({"en": SUMMARY_PADS}),
        transform="summarisation",
    ),
)


def held_out_phrasings() -> list[str]:
    """Every held-out phrasing with a marker list behind its check (reasoning, prefixes),
    "{text}" removed: none may hold a packaged marker."""
    tables = (*HELD_OUT_PREFIXES.values(), *HELD_OUT_REASONING.values())
    return [p.replace("{text}", "").strip() for phrasings in tables for p in phrasings]
