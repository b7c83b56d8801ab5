"""The probes' anchors: the settings, the datasets pooled, and each anchor's paraphrase,
random partner and controls, gathered from run folders or releases; and a file of
human-written negated and affirmative pairs (criterion 4's input, AFIN's layout) read."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shiftbench.core.data.listfields import refuse_listed
from shiftbench.core.data.runfolder import usable
from shiftbench.core.messages import counted, option
from shiftbench.core.records import DataRow, SourceRecord
from shiftbench.errors import InputError
from shiftbench.evaluate.collect import Collection, ConfigView

MEASURES = {"cosine": "cosine similarity", "ned": "normalised Euclidean distance"}
DISTANCES = frozenset({"ned"})  # lower is closer
# Criterion 1 is averaged over these margins, the same 21 for both measures. ALIGN-SIM
# does not list its margins, but its Table 3 follows from its Tables 6 and 7 with these:
# put every anchor at the mean difference a table prints, and the share over this grid is
# within 3.6 points of Table 3's cosine share and 2.9 points of its NED share for each of
# the 36 printed (model, dataset) cells; a NED grid half as wide (NED gaps are about half
# the cosine gaps) is up to 18.6 points off (tests/integration/test_probes.py).
_GRID = tuple(round(-1.0 + 0.1 * i, 2) for i in range(21))
DISTINCTION_GRIDS: dict[str, tuple[float, ...]] = {"cosine": _GRID, "ned": _GRID}
# Equation 2 as printed puts the random pairs' mean *similarity* (the cosine) inside; the
# appendix's prose beside it calls that term a distance. Both readings are reported: the
# printed one as "adjusted", the other as "adjusted_ned_inside".
ADJUSTMENTS = {
    "cosine": "mean cosine x alpha, alpha = 1 - mean over datasets of the mean random-pair "
    "cosine (ALIGN-SIM eq. 1)",
    "ned": "1 - (1 - mean NED) x (1 - mean over datasets of the mean random-pair cosine) "
    "(ALIGN-SIM eq. 2 as printed: sim(RND-Pairs) inside)",
    "ned_inside": "1 - (1 - mean NED) x (1 - mean over datasets of the mean random-pair NED) "
    "(eq. 2 with the appendix's prose: the random-pair distance inside)",
}
GOLD = "gold"
# --negation-pairs: a file of human-written pairs, a negated sentence and its affirmative
# paraphrase (ALIGN-SIM tests criterion 4 on AFIN, Hossain and Blanco 2022)
NEGATED, AFFIRMATIVE = "negated", "affirmative"
STS_TOP_SHARE = 0.8  # STS pairs scored in the top fifth of the scale count as paraphrases


@dataclass
class Anchor:
    """One original text with its paraphrase, random partner and controls."""

    subset: str
    split: str
    row_id: Any
    text: str
    paraphrase: str
    random: str
    controls: dict[str, list[str]] = field(default_factory=dict)  # control -> one per seed
    # the random pair's first text: None pairs `random` with the anchor itself; with
    # --random-pairs label-0, a non-paraphrase row's first text (ALIGN-SIM's §5.1)
    random_with: str | None = None


@dataclass
class Dataset:
    """One target of a probe run: its label, what it holds, and its anchors."""

    label: str
    collection: Collection
    anchors: list[Anchor]


@dataclass(frozen=True)
class ProbeSettings:
    epsilons: tuple[float, ...]
    seed: int
    paraphrases: str  # "gold" or a config name
    min_score: float | None  # STS gold pairs: the lowest score that counts as a paraphrase
    random_pairs: str = "anchor"  # RANDOM_PAIRS


# Where criterion 1's random pairs come from: each anchor with a text drawn from its
# dataset and split (shiftbench's default), or ALIGN-SIM's §5.1 reading: the dataset's
# non-paraphrase pairs (PairClassification label 0) shuffled, each first text paired with
# another row's second text, and the i-th anchor compared with the i-th such pair (cycling
# when there are fewer of them than anchors).
RANDOM_PAIRS = {
    "anchor": "each anchor with a text drawn from its dataset and split",
    "label-0": "label-0 pairs shuffled (ALIGN-SIM §5.1): a non-paraphrase row's first text "
    "with another's second text, the i-th pair beside the i-th anchor",
}


def parse_epsilons(text: str) -> tuple[float, ...]:
    """'0,0.05,0.1' as sorted unique floats."""
    try:
        values = sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise InputError(
            f"{option('epsilons', '--epsilon')} takes numbers separated by commas, not {text!r}"
        ) from None
    if not values or any(not -2.0 <= v <= 2.0 for v in values):
        raise InputError(
            f"{option('epsilons', '--epsilon')} takes numbers from -2 to 2, not {text!r}"
        )
    return tuple(values)


def gather_datasets(collections: list[Collection], settings: ProbeSettings) -> list[Dataset]:
    """Each target's anchors, its partners drawn as if it were probed alone."""
    labels = [c.label for c in collections]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        raise InputError(f"two targets are both called {twice}; each target is one dataset")
    return [Dataset(c.label, c, gather(c, settings)) for c in collections]


def control_configs(collection: Collection) -> list[ConfigView]:
    return [c for c in collection.configs if c.meta.get("kind") == "control"]


def gather(collection: Collection, settings: ProbeSettings) -> list[Anchor]:
    """The anchors of every subset and split, with their partners and controls."""
    source = collection.source
    refuse_listed(source, "probe")
    controls = control_configs(collection)
    if not controls:
        raise InputError(
            f"{collection.label} holds no control configs; make them with "
            "'shiftbench gen SOURCE -t controls'"
        )
    originals = {c.meta["subset"]: c for c in collection.configs if c.meta["kind"] == "original"}
    field_name = source["text_fields"][0]
    rng = np.random.default_rng(settings.seed)
    anchors: list[Anchor] = []
    for subset, original in originals.items():
        for split in source.get("splits") or list(original.splits):
            rows = original.splits.get(split, [])
            pairs = _paraphrase_pairs(collection, subset, split, rows, settings)
            if settings.random_pairs == "label-0":
                shuffled = _shuffled_pairs(collection, split, rows, rng)
                for i, (row_id, text, paraphrase) in enumerate(pairs):
                    first, second = shuffled[i % len(shuffled)]
                    anchors.append(Anchor(subset, split, row_id, text, paraphrase, second,
                                          random_with=first))  # fmt: skip
            else:
                pool = list(dict.fromkeys(r[f] for r in rows for f in source["text_fields"]))
                for row_id, text, paraphrase in pairs:
                    partner = _draw_partner(pool, {text, paraphrase}, rng)
                    anchors.append(Anchor(subset, split, row_id, text, paraphrase, partner))
            by_id = {a.row_id: a for a in anchors if (a.subset, a.split) == (subset, split)}
            for config in (c for c in controls if c.meta["subset"] == subset):
                for row in config.splits.get(split, []):
                    anchor = by_id.get(row["row_id"])
                    status = row.get(f"status_{field_name}", row.get("status"))
                    if anchor is not None and usable(status, config.meta["transform"]):
                        name = config.meta["transform"]
                        anchor.controls.setdefault(name, []).append(row[field_name])
    if not anchors:
        raise InputError(f"{collection.label} has no paraphrase pairs to anchor the probes")
    return anchors


def _paraphrase_pairs(
    collection: Collection,
    subset: str,
    split: str,
    rows: list[DataRow],
    settings: ProbeSettings,
) -> list[tuple[Any, str, str]]:
    """(row_id, anchor, paraphrase) for the rows that have a paraphrase."""
    source = collection.source
    fields = source["text_fields"]
    if settings.paraphrases != GOLD:
        config = next(
            (c for c in collection.configs
             if c.meta["subset"] == subset and _base(c) == settings.paraphrases),
            None,
        )  # fmt: skip
        if config is None:
            raise InputError(_no_config(collection, settings.paraphrases))
        return [
            (r["row_id"], r[f"original_{fields[0]}"], r[fields[0]])
            for r in config.splits.get(split, [])
            if usable(r.get("status"), config.meta.get("transform")) and r[fields[0]].strip()
        ]
    task_type = source["task_type"]
    if task_type == "PairClassification":
        return [(r["row_id"], r[fields[0]], r[fields[1]]) for r in rows if r["labels"] == 1]
    if task_type in ("STS", "STR"):
        threshold = gold_threshold(source, settings.min_score)
        return [(r["row_id"], r[fields[0]], r[fields[1]]) for r in rows if r["score"] >= threshold]
    raise InputError(
        f"gold paraphrase pairs come from STS or PairClassification data; {collection.label} "
        f"is a {task_type} run: name an LLM paraphrase config with {option('paraphrases')}"
    )


def gold_threshold(source: SourceRecord, min_score: float | None) -> float:
    if min_score is not None:
        return min_score
    low, high = source.get("score_range") or (0.0, 5.0)
    return float(low + STS_TOP_SHARE * (high - low))


def _base(config: ConfigView) -> str:
    """A config's name without its subset suffix."""
    subset = config.meta["subset"]
    return config.name[: -len(subset) - 1] if config.name.endswith(f".{subset}") else config.name


def _no_config(collection: Collection, name: str) -> str:
    have = [_base(c) for c in collection.configs if c.meta["kind"] == "transform"]
    listed = ", ".join(dict.fromkeys(have)) or "none"
    return (
        f"{option('paraphrases')} {name}: no such transform config in {collection.label} "
        f"(it has: {listed})"
    )


def _shuffled_pairs(
    collection: Collection, split: str, rows: list[DataRow], rng: np.random.Generator
) -> list[tuple[str, str]]:
    """ALIGN-SIM's random pairs: the label-0 rows' first texts, each with the second text
    of the row a seeded permutation puts in its place."""
    source = collection.source
    if source["task_type"] != "PairClassification":
        raise InputError(
            f"{option('random_pairs')} label-0 needs PairClassification data (label-0 pairs); "
            f"{collection.label} is a {source['task_type']} run"
        )
    first, second = source["text_fields"][:2]
    negatives = [r for r in rows if r["labels"] == 0]
    if len(negatives) < 2:
        raise InputError(
            f"{option('random_pairs')} label-0: {collection.label} {split} has "
            f"{counted(len(negatives), 'label-0 pair')}; at least 2 are needed to shuffle"
        )
    order = rng.permutation(len(negatives))
    return [(r[first], negatives[int(j)][second]) for r, j in zip(negatives, order, strict=True)]


def _draw_partner(pool: list[str], avoid: set[str], rng: np.random.Generator) -> str:
    """A text of the pool other than the anchor and its paraphrase."""
    if len(set(pool) - avoid) == 0:
        raise InputError("the dataset has too few texts to draw random pairs from")
    while True:
        candidate = pool[int(rng.integers(len(pool)))]
        if candidate not in avoid:
            return candidate


@dataclass(frozen=True)
class NegationPairs:
    """Human-written pairs for criterion 4: each negated sentence with its affirmative
    paraphrase, and the file they came from."""

    path: Path
    negated: tuple[str, ...]
    affirmative: tuple[str, ...]


def read_negation_pairs(path: Path) -> NegationPairs:
    """Pairs from a JSON Lines file (one object per line with `negated` and `affirmative`
    strings) or a CSV or TSV file whose header names those two columns. Bad input is one
    `PATH:LINE: what is wrong` error."""
    import csv

    if not path.is_file():
        raise InputError(f"{option('negation_pairs')} {path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        at = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}:{at}: not UTF-8 text") from None
    records: list[tuple[int, Any]] = []
    if path.suffix in (".csv", ".tsv"):
        reader = csv.DictReader(text.splitlines(), delimiter="\t" if path.suffix == ".tsv" else ",")
        missing = [c for c in (NEGATED, AFFIRMATIVE) if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}:1: the header has no column {', '.join(missing)}")
        records = [(reader.line_num, row) for row in reader]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from None
    negated: list[str] = []
    affirmative: list[str] = []
    for number, record in records:
        if not isinstance(record, dict):
            raise InputError(
                f"{path}:{number}: a pair is an object with {NEGATED} and {AFFIRMATIVE}"
            )
        for key, into in ((NEGATED, negated), (AFFIRMATIVE, affirmative)):
            value = record.get(key)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{path}:{number}: {key} is not a non-empty string")
            into.append(value)
    if not negated:
        raise InputError(f"{path}: holds no pairs")
    return NegationPairs(path, tuple(negated), tuple(affirmative))
