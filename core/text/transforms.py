"""The transformations gen applies: their axis, their calls, prompts and token budgets.

A transform is one or two calls (steps). Each step has a prompt template with `{text}`
(the step's input) and `{language}` (the language the step writes in), a rule for which
language that is, and a token budget that grows with the input.

Controls are registered beside them: perturbations whose effect on meaning is known in
advance (`meaning`: preserved or changed), made by a rule (gen/controls.py, no calls) or,
for negation and the affirmative paraphrase, by one call. They belong to no robustness
axis. `criterion` names the ALIGN-SIM criterion a control serves; negation is shiftbench's
own and serves none.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from shiftbench.core.registry import Registry, suggest
from shiftbench.core.text.languages import get_language
from shiftbench.errors import InputError

# Which language a step writes in.
SOURCE = "source"  # the text's own language
TARGET = "target"  # the run's target language (translation, cross-translation)
PIVOT = "pivot"  # a pivot language, drawn per text (first half of back-translation)

# What a control does to meaning.
PRESERVED = "preserved"
CHANGED = "changed"

# Which draw picks the non-source language of a transform.
PER_DATASET = "per-dataset"  # one language per (dataset, subset, seed)
PER_TEXT = "per-text"  # one language per (text, seed)


@dataclass(frozen=True)
class Budget:
    """Output tokens for an input: base + max(per_word x words, chars / chars_per_token).

    `length` is the output's expected length as a multiple of the input's, in tokens: what
    a dry run's token estimate assumes of a call that ends by itself (gen/estimate.py).
    """

    base: int
    per_word: int
    chars_per_token: int
    length: float = 1.0

    def tokens(self, text: str, cap: int) -> int:
        grown = max(self.per_word * len(text.split()), len(text) // self.chars_per_token)
        return min(cap, self.base + grown)

    def describe(self) -> str:
        return (
            f"min(cap, {self.base} + max({self.per_word} x words, "
            f"characters / {self.chars_per_token}))"
        )


SAME_LENGTH = Budget(48, 4, 2)
# some scripts and languages need many tokens per word
TRANSLATED = Budget(64, 6, 1, length=1.25)
LONGER = Budget(160, 8, 1, length=3.0)
SHORTER = Budget(32, 3, 3, length=0.5)


# How a call's token budget is set: grown with its input up to the cap (shiftbench's), or
# the step's flat budget whatever the input (HTEB's release)
GROWN = "grown"
FLAT = "flat"
TOKEN_BUDGETS = (GROWN, FLAT)
# HTEB's flat token budgets (hteb/config.py): 512 per call, 1024 for an expansion call
FLAT_TOKENS = 512
FLAT_EXPANSION_TOKENS = 1024


@dataclass(frozen=True)
class Step:
    """One call: its prompt file, the language it writes in, its token budget (grown with
    the input), and its flat budget (the same for every input)."""

    prompt_file: str
    language: str
    budget: Budget
    flat_tokens: int = FLAT_TOKENS


@dataclass(frozen=True)
class Transform:
    """One LLM transformation of the HTEB/PTEB protocols."""

    name: str
    axis: str | None  # None for controls
    description: str
    steps: tuple[Step, ...]
    draw: str | None = None  # how its non-source language is drawn, if it has one
    max_new_tokens: int = 512  # the cap on every step's budget
    version: int = 1  # bump when behaviour changes, so cached rows are not reused
    meaning: str = PRESERVED
    control: bool = False  # a control: its configs are probes, never part of an axis
    rule: str | None = None  # a rule-based control's rule (gen/controls.py); no steps
    count: int = 1  # how many words (pairs, for the jumble) a rule changes
    criterion: int | None = None  # the ALIGN-SIM criterion (1-5) a control serves, if any
    # only texts with an English negation cue are sent; the others are not-applicable
    negated_only: bool = False

    @property
    def calls(self) -> int:
        return len(self.steps)

    @property
    def pool_has_english(self) -> bool:
        """Back-translation pivots through the pool plus English."""
        return any(step.language == PIVOT for step in self.steps)


TRANSFORMS: dict[str, Transform] = {
    t.name: t
    for t in [
        Transform(
            "paraphrase",
            "Lexical/Stylistic",
            "rephrase in the same language, same meaning",
            (Step("paraphrase.txt", SOURCE, SAME_LENGTH),),
        ),
        Transform(
            "backtranslation",
            "Lexical/Stylistic",
            "translate to a pivot language, then back to the source language",
            (Step("translate.txt", PIVOT, TRANSLATED), Step("translate.txt", SOURCE, TRANSLATED)),
            draw=PER_TEXT,
        ),
        Transform(
            "style-change",
            "Lexical/Stylistic",
            "formal to informal and informal to formal, meaning kept",
            (Step("style-change.txt", SOURCE, SAME_LENGTH),),
        ),
        Transform(
            "expansion",
            "Length",
            "add detail and context, core meaning kept; a question stays a question",
            (Step("expansion.txt", SOURCE, LONGER, FLAT_EXPANSION_TOKENS),),
            max_new_tokens=1024,
        ),
        Transform(
            "summarisation",
            "Length",
            "shorter, same meaning; a question stays an unanswered question",
            (Step("summarisation.txt", SOURCE, SHORTER),),
        ),
        Transform(
            "summarised-expansion",
            "Length",
            "expansion, then a summary of the expansion",
            (
                Step("expansion.txt", SOURCE, LONGER, FLAT_EXPANSION_TOKENS),
                Step("summarisation.txt", SOURCE, SHORTER),
            ),
            max_new_tokens=1024,
        ),
        Transform(
            "translation",
            "Language",
            "every text of a run into one target language",
            (Step("translate.txt", TARGET, TRANSLATED),),
            draw=PER_DATASET,
        ),
        Transform(
            "cross-translation",
            "Language",
            "each text into its own target language",
            (Step("translate.txt", TARGET, TRANSLATED),),
            draw=PER_TEXT,
        ),
    ]
}


def _rule_control(
    name: str,
    rule: str,
    count: int,
    meaning: str,
    criterion: int,
    description: str,
    version: int = 1,
) -> Transform:
    return Transform(name, None, description, (), meaning=meaning, control=True, rule=rule,
                     count=count, criterion=criterion, version=version)  # fmt: skip


CONTROLS: dict[str, Transform] = {
    t.name: t
    for t in [
        *(
            # version 2: synonyms only from a sense with at least 40% of the word's tagged
            # uses (gen/controls.py MIN_SENSE_SHARE)
            _rule_control(f"synonym-swap-{n}", "synonym", n, PRESERVED, 2,
                          f"{n} content word{'s' * (n > 1)} replaced by WordNet synonyms "
                          "(of a sense with at least 40% of the word's uses)", version=2)
            for n in (1, 2, 3)
        ),
        _rule_control("antonym-swap", "antonym", 1, CHANGED, 3,
                      "one content word replaced by a WordNet antonym"),
        *(
            _rule_control(f"word-jumble-{n}", "jumble", n, CHANGED, 5,
                          f"{n} random pair{'s' * (n > 1)} of words swapped")
            for n in (1, 2, 3)
        ),
        Transform(
            "negation",
            None,
            "shiftbench's own control: the main clause negated, so the meaning changes "
            "(one LLM call)",
            (Step("negation.txt", SOURCE, SAME_LENGTH),),
            meaning=CHANGED,
            control=True,
        ),
        Transform(
            "affirmative-paraphrase",
            None,
            "a text with a negation said again without one, same meaning (one LLM call; "
            "texts without a negation cue are not-applicable)",
            (Step("affirmative-paraphrase.txt", SOURCE, SAME_LENGTH),),
            meaning=PRESERVED,
            control=True,
            criterion=4,
            negated_only=True,
        ),
    ]
}  # fmt: skip
REGISTERED = Registry("transform", {**TRANSFORMS, **CONTROLS})
GROUPS = {"all": list(TRANSFORMS), "controls": list(CONTROLS)}

PROMPT_VARIANTS = {
    "paraphrase": ("paraphrase.txt", "paraphrase-2.txt", "paraphrase-3.txt", "paraphrase-4.txt")
}


@dataclass(frozen=True)
class Prompt:
    """A prompt template (`{text}`, `{language}`) and where it came from."""

    text: str
    origin: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, text: str, language: str) -> str:
        return self.text.replace("{language}", language).replace("{text}", text)


def get_transform(name: str) -> Transform:
    try:
        return REGISTERED[name]
    except KeyError:
        raise InputError(
            f"unknown transform {name!r}; available: {', '.join(REGISTERED)} (groups: "
            f"{', '.join(GROUPS)}){suggest(name, [*REGISTERED, *GROUPS])}"
        ) from None


def expand_transforms(names: tuple[str, ...]) -> list[Transform]:
    """Transforms by name (each entry may be comma-separated), in order, without repeats;
    "all" stands for the eight LLM transformations, "controls" for every control."""
    chosen: list[str] = []
    for entry in names:
        for name in (part.strip() for part in entry.split(",")):
            chosen += GROUPS.get(name, [name])
    return [get_transform(name) for name in dict.fromkeys(chosen)]


# Which prompt file replaces which step: (transform, step from 1) -> path; (None, None)
# for the bare FILE of every single-call transform, (name, None) for TRANSFORM=FILE.
PromptFiles = dict[tuple[str | None, int | None], str]

# --prompt-file TRANSFORM[:STEP]=FILE
TARGETED_PROMPT = re.compile(r"^([a-z0-9-]+)(?::(\d+))?=(.+)$")


def parse_prompt_files(values: tuple[str, ...], chosen: list[Transform]) -> PromptFiles:
    """`--prompt-file` values (FILE, TRANSFORM=FILE, TRANSFORM:STEP=FILE), checked against
    the transforms being generated; every file is read, so a bad one stops the run early."""
    files: PromptFiles = {}
    names = {t.name for t in chosen}
    for value in values:
        match = TARGETED_PROMPT.match(value)
        if match is None:
            key: tuple[str | None, int | None] = (None, None)
            path = value
        else:
            transform = get_transform(match[1])
            step = int(match[2]) if match[2] is not None else None
            path = match[3]
            key = (transform.name, step)
            if transform.rule is not None:
                raise InputError(
                    f"--prompt-file {value}: {transform.name} is a rule and has no prompt"
                )
            if step is not None and not 1 <= step <= transform.calls:
                raise InputError(
                    f"--prompt-file {value}: {transform.name} has {transform.calls} "
                    f"step{'s' * (transform.calls > 1)}"
                )
            if step is None and transform.calls != 1:
                raise InputError(
                    f"--prompt-file {value}: {transform.name} makes {transform.calls} calls; "
                    f"name the step, e.g. {transform.name}:1=FILE"
                )
            if transform.name not in names:
                raise InputError(f"--prompt-file {value}: {transform.name} is not being generated")
        if key in files:
            raise InputError(f"--prompt-file names {_key_text(key)} twice")
        _read_template(path)
        files[key] = path
    return files


def _key_text(key: tuple[str | None, int | None]) -> str:
    name, step = key
    if name is None:
        return "a file for every single-call transform"
    return f"{name}:{step}" if step is not None else name


def load_prompts(
    transform: Transform, override: str | PromptFiles | None = None, variant: int = 1
) -> tuple[Prompt, ...]:
    """One prompt per step: packaged (variant `variant`), or a user's template file.

    `override` is one file for a single-call transform, or the parsed `--prompt-file`
    values; a step with a file of its own uses it, the others keep the packaged prompt.
    """
    if transform.rule is not None:
        return ()
    files: PromptFiles = (
        {(None, None): override} if isinstance(override, str) else dict(override or {})
    )
    if transform.calls == 1:
        path = files.get((transform.name, 1)) or files.get((transform.name, None))
        path = path or files.get((None, None))
        if path is not None:
            return (_read_template(path),)
    else:
        if (None, None) in files and not any(k[0] == transform.name for k in files):
            raise InputError(
                f"{transform.name} makes {transform.calls} calls; --prompt-file FILE replaces "
                "the prompt of single-call transforms only (name a step: "
                f"{transform.name}:STEP=FILE)"
            )
        steps = {k[1]: p for k, p in files.items() if k[0] == transform.name and k[1]}
        if steps:
            return tuple(
                _read_template(steps[i]) if i in steps else _packaged(step.prompt_file)
                for i, step in enumerate(transform.steps, start=1)
            )
    if variant != 1:
        files_ = PROMPT_VARIANTS.get(transform.name, ())
        if variant > len(files_):
            have = f"variants 1-{len(files_)}" if files_ else "no prompt variants"
            raise InputError(f"{transform.name} has {have}; --prompt-variant {variant} asked")
        return (_packaged(files_[variant - 1]),)
    return tuple(_packaged(step.prompt_file) for step in transform.steps)


def _packaged(filename: str) -> Prompt:
    text = resources.files("shiftbench").joinpath("prompts", filename)
    return Prompt(text.read_text(encoding="utf-8"), f"shiftbench:{filename}")


def _read_template(path_text: str) -> Prompt:
    path = Path(path_text)
    if not path.is_file():
        raise InputError(f"prompt file {path_text} does not exist")
    data = path.read_bytes()
    try:
        body = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"prompt file {path_text}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
            "a prompt file is a UTF-8 text template"
        ) from None
    if "{text}" not in body:
        raise InputError(f"prompt file {path_text} has no {{text}} placeholder")
    return Prompt(body, str(path.resolve()))


# What each transform asks of its output, as a judge and a human rater are told.
INSTRUCTIONS: dict[str, str] = {
    "paraphrase": "say the same thing in other words, in {language}",
    "backtranslation": "translate the text into another language and back into {language}, "
    "so that the wording changes and the meaning stays",
    "style-change": "change the register (formal to informal, or informal to formal) and "
    "keep the meaning, in {language}",
    "expansion": "make the text longer with added detail and context, keeping its core "
    "meaning (a question stays a question), in {language}",
    "summarisation": "make the text shorter and keep its meaning (a question stays a "
    "question), in {language}",
    "summarised-expansion": "expand the text and then summarise the expansion, keeping its "
    "core meaning, in {language}",
    "translation": "translate the text into {language}",
    "cross-translation": "translate the text into {language}",
}


def instruction(transform: str, language: str | None) -> str:
    """What a transform asks of its output, in words a judge or a human rater reads, for
    the output's language code (the LLM judge's quality prompt and the rating form share it)."""
    name = "the language of the original"
    if language:
        try:
            name = get_language(language).name
        except InputError:
            name = language
    template = INSTRUCTIONS.get(transform, "rewrite the text in {language}")
    return template.replace("{language}", name)
