"""The default meaning check: cheap evidence that a rewrite says something else.

No LLM is involved. A text field is `meaning-changed` when its embedding drift (1 - cosine
of original and output under a small sentence encoder, all-MiniLM-L6-v2 by default) is
above a threshold, or when the output says or unsays a negation (its count of negation
cues differs). Other cheap evidence is measured beside it (EVIDENCE: a new token of
letters and digits such as "5-hexteramidine", a new day such as "Yesterday") but raised
too many false alarms on human paraphrases to be used. The threshold and the evidence
kinds were chosen on pairs whose answer is known (human
paraphrase judgements and shiftbench's own controls) by the rule in `choose`; the
command that repeats the choice and prints its precision and recall is
`python bench/calibrate_meaning.py DATA_DIR`.

validate's settings read the defaults from here, so this module loads no numerical library
until a check runs.

The check applies where the rewrite should keep both the meaning and the language: the
Lexical/Stylistic transforms (paraphrase, back-translation, style change). The packaged
encoder reads English only, so under it only English fields are checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_ENCODER = "all-MiniLM-L6-v2"
# Chosen by bench/calibrate_meaning.py (docs/guides/validate.md gives its figures).
DEFAULT_THRESHOLD = 0.45
CHECKED_AXIS = "Lexical/Stylistic"  # transforms that keep meaning and language
ENGLISH_ONLY = frozenset({DEFAULT_ENCODER, f"sentence-transformers/{DEFAULT_ENCODER}"})
MEANING_CHANGED = "meaning-changed"

_NEGATION = re.compile(
    r"\b(?:not|no|never|nobody|nothing|none|neither|nor|without|cannot)\b|n't\b", re.I
)
# a token mixing letters and digits (G12D, 5-hexteramidine, ABT-737): names of things
_NAMED = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[^\W\d_])\w+(?:-\w+)*")


# a day the text is anchored to ("Yesterday, it was revealed ...")
_DAY = re.compile(
    r"\b(?:yesterday|today|tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b",
    re.I,
)


def new_day(original: str, output: str) -> bool:
    """The output names a day (yesterday, Tuesday, ...) that the original does not."""
    said = {d.lower() for d in _DAY.findall(original)}
    return any(d.lower() not in said for d in _DAY.findall(output))


def negation_flipped(original: str, output: str) -> bool:
    """The output holds a different number of negation cues than the original."""
    return len(_NEGATION.findall(original)) != len(_NEGATION.findall(output))


def new_named_token(original: str, output: str) -> bool:
    """The output holds a token of letters and digits that the original does not."""
    return bool(set(_NAMED.findall(output)) - set(_NAMED.findall(original)))


EVIDENCE: dict[str, Callable[[str, str], bool]] = {
    "negation": negation_flipped,
    "new-named-token": new_named_token,
    "new-day": new_day,
}
# the kinds the calibration kept (bench/calibrate_meaning.py's rule); the others are
# measured there but would raise false alarms past the budget
USED_EVIDENCE: tuple[str, ...] = ("negation",)


@dataclass(frozen=True)
class Verdict:
    """One (original, output) pair: its drift, the evidence found, and the verdict."""

    drift: float | None
    evidence: tuple[str, ...]
    changed: bool


def verdicts(
    drifts: Sequence[float | None],
    pairs: Sequence[tuple[str, str]],
    threshold: float,
    evidence: Sequence[str] = USED_EVIDENCE,
) -> list[Verdict]:
    """Each pair's verdict from its drift and the evidence kinds named."""
    out = []
    for drift, (original, output) in zip(drifts, pairs, strict=True):
        found = tuple(k for k in evidence if EVIDENCE[k](original, output))
        changed = bool(found) or (drift is not None and drift > threshold)
        out.append(Verdict(drift, found, changed))
    return out


def cosine_drift(encoder: Any, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """1 - cosine of each pair's two embeddings, rounded to 4 decimals."""
    import numpy as np

    if not pairs:
        return []
    a = encoder.embed([p[0] for p in pairs]).astype(np.float64)
    b = encoder.embed([p[1] for p in pairs]).astype(np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    cosine = np.einsum("ij,ij->i", a, b) / np.where(norms == 0, 1.0, norms)
    return [round(float(1.0 - c), 4) for c in cosine]


class MeaningCheck:
    """The check under one encoder and threshold; the encoder loads on first use, once per
    process (core/models/encoders.py keeps loaded models)."""

    def __init__(self, spec: str, threshold: float, *, batch_size: int = 32) -> None:
        from shiftbench.core.models.encoders import Encoder

        self.spec = spec
        self.threshold = threshold
        self.encoder = Encoder(spec, batch_size=batch_size, option="--meaning-encoder")
        self.english_only = spec in ENGLISH_ONLY

    def applies(self, axis: str | None, language: str | None) -> bool:
        """Whether a field of a config of this axis, in this language, is checked."""
        if axis != CHECKED_AXIS:
            return False
        return not self.english_only or (language or "en") == "en"

    def describe(self) -> dict[str, object]:
        return {
            "encoder": self.encoder.describe(),
            "threshold": self.threshold,
            "evidence": list(USED_EVIDENCE),
        }

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        """Each pair's verdict (an empty output gets no drift and no verdict of change)."""
        kept = [i for i, (_, o) in enumerate(pairs) if o.strip()]
        drifts: list[float | None] = [None] * len(pairs)
        for i, d in zip(kept, cosine_drift(self.encoder, [pairs[i] for i in kept]), strict=True):
            drifts[i] = d
        found = verdicts(drifts, pairs, self.threshold)
        return [v if v.drift is not None else Verdict(None, (), False) for v in found]


def false_alarm_rate(verdicts_: Sequence[Verdict]) -> float:
    return sum(v.changed for v in verdicts_) / len(verdicts_) if verdicts_ else 0.0


def choose(
    same: dict[str, tuple[list[float], list[tuple[str, str]]]],
    changed: dict[str, tuple[list[float], list[tuple[str, str]]]],
    budget: float = 0.05,
    tried: list[tuple[tuple[str, ...], float | None, float | None]] | None = None,
) -> tuple[float, tuple[str, ...]]:
    """The calibration rule: for every set of evidence kinds, the lowest drift threshold
    (on a 0.01 grid) that keeps false alarms at most `budget` on EACH same-meaning set;
    of those, the (threshold, evidence) whose mean recall over the changed sets is
    highest (the first such on a tie, fewer kinds first). `tried`, when given, gets
    (evidence, threshold, mean recall) for every set of kinds, None where none fits."""
    from itertools import combinations

    import numpy as np

    def flags(group: dict[str, tuple[list[float], list[tuple[str, str]]]]) -> list[Any]:
        out = []
        for drifts, pairs in group.values():
            d = np.array([np.nan if x is None else x for x in drifts], dtype=float)
            kinds = {k: np.array([f(a, b) for a, b in pairs], dtype=bool)
                     for k, f in EVIDENCE.items()}  # fmt: skip
            out.append((d, kinds))
        return out

    def flagged(d: Any, kinds: dict[str, object], used: tuple[str, ...], t: float) -> float:
        hit = np.nan_to_num(d, nan=-1.0) > t
        for k in used:
            hit |= kinds[k]
        return float(hit.mean()) if len(hit) else 0.0

    same_f, changed_f = flags(same), flags(changed)
    best: tuple[float, float, tuple[str, ...]] | None = None
    for n in range(len(EVIDENCE) + 1):
        for used in combinations(EVIDENCE, n):
            t = next(
                (step / 100 for step in range(201)
                 if all(flagged(d, k, used, step / 100) <= budget for d, k in same_f)),
                None,
            )  # fmt: skip
            if t is None:
                if tried is not None:
                    tried.append((used, None, None))
                continue
            recall = float(np.mean([flagged(d, k, used, t) for d, k in changed_f]))
            if tried is not None:
                tried.append((used, t, recall))
            if best is None or recall > best[0]:
                best = (recall, t, used)
    assert best is not None
    return best[1], best[2]
