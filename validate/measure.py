"""How reliable each automatic check is, measured on real data: false alarms and misses.

False alarms: every check runs on human-written texts as if they were rewrites, so every
alarm is false. Where a dataset has near-paraphrase pairs (STS gold at least
PARAPHRASE_SHARE of its scale's top, MRPC's positives), the checks that compare output with
input (the leaks, runaway, truncated) take (sentence1 -> sentence2) as (input -> output),
a realistic rewrite; the checks that read the output alone (empty, ellipsis, JSON
fragment, wrong language) take every distinct text. In a dataset of single texts, the
leak checks judge each text against an input with no marker (an upper bound: how often
the domain's texts hold one), and runaway and truncated are not measured (a text against
itself cannot fail them). `identical` has no false alarm to measure (an unchanged text is
what it flags), nor `summary-too-long` (the data hold no human summaries).

Misses: failures of each kind planted into real texts (real translations for the wrong
language, cut texts, echoed prompts and answer prefixes, reasoning, empty and placeholder
outputs, JSON wrappers, repetition); every pass is a miss. The phrasings are written
in validate/planted.py, and those marked held-out share nothing with markers.json, so
their miss rate measures what the marker lists do not foresee.

Deterministic: every sample is drawn with a seed of its own name, then sorted. Bounded:
at most `cap` texts (or pairs) per dataset and language for the false alarms and
`plant_cap` per dataset and language for the planted failures (MeasureChecksSettings in
validate/api.py holds their defaults). The packaged
validate/measured.json holds the result the guide's table is made from.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

from shiftbench.core.data.jsonfiles import read_jsonl
from shiftbench.core.records import DataRow
from shiftbench.core.text.checks import CHECKS, Case
from shiftbench.core.text.langid import DEFAULT_IDENTIFIER, LanguageID, checkable, get_identifier
from shiftbench.errors import InputError
from shiftbench.validate.measure_rows import FalseAlarmRow, Measurement, MissRow
from shiftbench.validate.planted import PLANTS

FORMAT = 1
GOAL_FALSE_ALARMS = 0.005
GOAL_MISSES = 0.02
SEED = 0
PARAPHRASE_SHARE = 0.8  # STS pairs with gold >= this share of the top: 4 of 5, 3.2 of 4
MEASURED_JSON = "measured.json"
COMMAND = "shiftbench measure-checks DATA_DIR --write"
START = "<!-- check-reliability:start -->"
END = "<!-- check-reliability:end -->"
GUIDE = Path("docs") / "guides" / "validate.md"

# checks that read the output alone, and those that compare it with its input
OUTPUT_ONLY = ("empty", "ellipsis", "json-fragment", "wrong-language")
AGAINST_INPUT = ("reasoning-leak", "prefix-leak", "runaway", "truncated")
LEAKS = ("reasoning-leak", "prefix-leak")
NOT_MEASURED = {
    "identical": "an unchanged text is what it flags",
    "summary-too-long": "no human-written summaries in the data",
}


@dataclass(frozen=True)
class Dataset:
    """One dataset and language of the data folder, as the measurement reads it.

    Attributes:
        name: The dataset's folder.
        language: ISO 639-1 code of its texts.
        path: The JSON Lines file, relative to the data folder.
        fields: The text fields.
        pairs: How a near-paraphrase pair is told: ("score", top of the scale) or
            ("labels", 1); None: single texts.
        aligned: The field that lines rows up across languages ("id", or "" for the row's
            place); None: not aligned.
    """

    name: str
    language: str
    path: str
    fields: tuple[str, ...]
    pairs: tuple[str, float] | None = None
    aligned: str | None = None


_STS_LANGS = ("en", "de", "es", "fr", "it", "nl")
_MASAKHA = (("eng", "en"), ("fra", "fr"), ("hau", "ha"), ("swa", "sw"), ("amh", "am"))
DATASETS: tuple[Dataset, ...] = (
    Dataset("BIOSSES", "en", "BIOSSES/data/test.jsonl", ("sentence1", "sentence2"), ("score", 4)),
    Dataset("Banking77Classification", "en", "Banking77Classification/data/test.jsonl", ("text",)),
    Dataset("MRPC", "en", "MRPC/data/test.jsonl", ("sentence1", "sentence2"), ("labels", 1)),
    *(
        Dataset(
            "MasakhaNEWSClusteringS2S",
            code,
            f"MasakhaNEWSClusteringS2S/{folder}/test.jsonl",
            ("sentences",),
        )
        for folder, code in _MASAKHA
    ),
    Dataset(
        "STSBenchmark",
        "en",
        "STSBenchmark/data/test.jsonl",
        ("sentence1", "sentence2"),
        ("score", 5),
    ),
    *(
        Dataset(
            "STSBenchmarkMultilingualSTS",
            code,
            f"STSBenchmarkMultilingualSTS/{code}/test.jsonl",
            ("sentence1", "sentence2"),
            ("score", 5),
            aligned="",
        )
        for code in _STS_LANGS
    ),
    *(
        Dataset(
            "XQuADRetrieval", code, f"XQuADRetrieval/{code}/queries.jsonl", ("text",), aligned="id"
        )
        for code in ("en", "de", "es")
    ),
)


# --- reading and sampling the data ----------------------------------------------------------


def _rows(data_dir: Path, dataset: Dataset) -> list[DataRow]:
    path = data_dir / dataset.path
    if not path.is_file():
        raise InputError(
            f"{data_dir} has no {dataset.path}: the measurement needs every dataset of "
            f"the shared data folder ({', '.join(sorted({d.name for d in DATASETS}))})"
        )
    return read_jsonl(path, required=dataset.fields, strings=dataset.fields)


def _sample(items: Iterable[Any], cap: int, name: str, seed: int) -> list[Any]:
    """At most `cap` of the distinct items, drawn with a seed of `name`'s own, sorted."""
    pool = sorted(set(items))
    if len(pool) > cap:
        pool = sorted(random.Random(f"{seed}:{name}").sample(pool, cap))
    return pool


def _pairs(rows: list[DataRow], dataset: Dataset) -> list[tuple[str, str]]:
    assert dataset.pairs is not None
    key, top = dataset.pairs
    first, second = dataset.fields[:2]
    if key == "score":
        good = [r for r in rows if float(r.get("score", 0)) >= PARAPHRASE_SHARE * top]
    else:
        good = [r for r in rows if r.get(key) == top]
    return [(r[first], r[second]) for r in good]


def _texts(rows: list[DataRow], dataset: Dataset) -> list[str]:
    return [r[f] for r in rows for f in dataset.fields if r[f].strip()]


def _aligned(rows: list[DataRow], dataset: Dataset) -> dict[str, str]:
    """Unit key -> text, keys shared by the same text's versions in other languages."""
    out = {}
    for i, row in enumerate(rows):
        key = str(row.get(dataset.aligned)) if dataset.aligned else f"{i:06d}"
        for f in dataset.fields:
            out[f"{key}/{f}"] = row[f]
    return out


# --- the measurement ------------------------------------------------------------------------


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def measure_checks(
    data_dir: Path,
    *,
    cap: int,
    plant_cap: int,
    seed: int = SEED,
    identifier: LanguageID | None = None,
) -> Measurement:
    """Every check's false alarms and misses on the real datasets of `data_dir`.

    Args:
        data_dir: The shared data folder (STSBenchmark/, BIOSSES/, ...).
        cap: Texts (or pairs) per dataset and language for the false alarms.
        plant_cap: Texts per dataset and language that each failure is planted into.
        seed: Seed of every sample.
        identifier: Language ID; None: the one validate uses by default.

    Returns:
        The document validate/measured.json holds: the settings, then one row per check,
        dataset and language (false alarms) and per check, kind and language (misses).

    Raises:
        InputError: A dataset file missing or not the JSON Lines expected.
    """
    if not data_dir.is_dir():
        raise InputError(f"{data_dir}: no such folder (the shared data folder is needed)")
    lid = identifier or get_identifier(DEFAULT_IDENTIFIER)
    rows = {d: _rows(data_dir, d) for d in DATASETS}
    false_alarms: list[FalseAlarmRow] = []
    misses: list[MissRow] = []
    for d in DATASETS:
        false_alarms += _false_alarms(d, rows[d], cap, seed, lid)
    for d in DATASETS:
        misses += _planted(d, rows[d], plant_cap, seed)
    misses += _translations(rows, plant_cap, seed, lid)
    order = {c: i for i, c in enumerate(CHECKS)}
    misses.sort(key=lambda m: (order[m["check"]], m["kind"], m["held_out"] is True,
                               m["dataset"], m["language"]))  # fmt: skip
    return {
        "format": FORMAT,
        "settings": {
            "command": COMMAND,
            "cap": cap,
            "plant_cap": plant_cap,
            "seed": seed,
            "language_id": lid.name,
            "paraphrase_share": PARAPHRASE_SHARE,
            "goal": {"false_alarms": GOAL_FALSE_ALARMS, "misses": GOAL_MISSES},
            "datasets": sorted({f"{d.name}/{d.language}" for d in DATASETS}),
            "not_measured": NOT_MEASURED,
        },
        "false_alarms": false_alarms,
        "misses": misses,
    }


def _detect(lid: LanguageID, texts: list[str], language: str) -> list[str | None]:
    return list(lid.detect(texts, [language] * len(texts))) if texts else []


def _false_alarms(
    d: Dataset, rows: list[DataRow], cap: int, seed: int, lid: LanguageID
) -> list[FalseAlarmRow]:
    name = f"{d.name}/{d.language}"
    texts = _sample(_texts(rows, d), cap, f"texts:{name}", seed)
    pairs = _sample(_pairs(rows, d), cap, f"pairs:{name}", seed) if d.pairs else []
    out: list[FalseAlarmRow] = []

    def row(check: str, data: str, cases: list[Case]) -> FalseAlarmRow:
        alarms = sum(CHECKS[check](c) for c in cases)
        return {"check": check, "dataset": d.name, "language": d.language, "data": data,
                "measured": True, "texts": len(cases), "alarms": alarms,
                "rate": _rate(alarms, len(cases))}  # fmt: skip

    for check in CHECKS:
        if check in NOT_MEASURED:
            continue
        if check == "wrong-language" and not checkable(lid, d.language):
            out.append({"check": check, "dataset": d.name, "language": d.language,
                        "data": "texts", "measured": False,
                        "why": f"{lid.name} does not know {d.language}"})  # fmt: skip
            continue
        if check in OUTPUT_ONLY:
            found = _detect(lid, texts, d.language) if check == "wrong-language" else []
            cases = [
                Case(t, t, "paraphrase", d.language, found[i] if found else None)
                for i, t in enumerate(texts)
            ]
            out.append(row(check, "texts", cases))
        elif pairs:
            cases = [Case(a, b, "paraphrase", d.language) for a, b in pairs]
            out.append(row(check, "pairs", cases))
        elif check in LEAKS:
            out.append(row(check, "texts, no input", [Case("", t, "paraphrase", d.language)
                                                      for t in texts]))  # fmt: skip
    return out


def _planted(d: Dataset, rows: list[DataRow], plant_cap: int, seed: int) -> list[MissRow]:
    name = f"{d.name}/{d.language}"
    texts = _sample(_texts(rows, d), plant_cap, f"plants:{name}", seed)
    others = [c for c in CHECKS if c != "wrong-language"]
    out = []
    for plant in PLANTS:
        missed = missed_all = 0
        for i, text in enumerate(texts):
            case = Case(text, plant.make(text, d.language, i), plant.transform, d.language,
                        None, plant.finish_reason)  # fmt: skip
            if not CHECKS[plant.check](case):
                missed += 1
                missed_all += not any(CHECKS[c](case) for c in others)
        out.append(_miss_row(plant.check, plant.kind, plant.held_out, d, len(texts), missed,
                             missed_all))  # fmt: skip
    return out


def _miss_row(
    check: str, kind: str, held_out: bool | None, d: Dataset, planted: int, missed: int,
    missed_all: int,
) -> MissRow:  # fmt: skip
    return {"check": check, "kind": kind, "held_out": held_out, "dataset": d.name,
            "language": d.language, "measured": True, "planted": planted, "missed": missed,
            "rate": _rate(missed, planted), "missed_by_all": missed_all}  # fmt: skip


def _translations(
    rows: dict[Dataset, list[DataRow]], cap: int, seed: int, lid: LanguageID
) -> list[MissRow]:
    """wrong-language's misses: a text's real translation (aligned datasets), or a text of
    another language of the same dataset (MasakhaNEWS), as the output where the text's
    own language is expected. Pairs whose two texts are the same are left out."""
    others = [c for c in CHECKS if c != "wrong-language"]
    by_name: dict[str, list[Dataset]] = {}
    for d in DATASETS:
        by_name.setdefault(d.name, []).append(d)
    out: list[MissRow] = []
    for name, group in by_name.items():
        if len(group) < 2:
            continue
        aligned = group[0].aligned is not None
        kind = "real translation" if aligned else "text of another language"
        units = {d: _aligned(rows[d], d) for d in group} if aligned else {}
        for d in group:
            if not checkable(lid, d.language):
                out.append({"check": "wrong-language", "kind": kind, "held_out": None,
                            "dataset": d.name, "language": d.language, "measured": False,
                            "why": f"{lid.name} does not know {d.language}"})  # fmt: skip
                continue
            rest = [o for o in group if o is not d]
            pairs: list[tuple[str, str]] = []
            if aligned:
                keys = _sample(units[d], cap, f"translations:{name}/{d.language}", seed)
                for i, key in enumerate(keys):
                    other = rest[i % len(rest)]
                    pairs.append((units[d][key], units[other].get(key, "")))
            else:
                texts = _sample(_texts(rows[d], d), cap, f"translations:{name}/{d.language}", seed)
                pool = {o: _sample(_texts(rows[o], o), cap, f"texts:{name}/{o.language}", seed)
                        for o in rest}  # fmt: skip
                for i, text in enumerate(texts):
                    other = rest[i % len(rest)]
                    pairs.append((text, pool[other][i % len(pool[other])]))
            pairs = [
                (a, b) for a, b in pairs if b.strip() and a.strip().lower() != b.strip().lower()
            ]
            found = _detect(lid, [b for _, b in pairs], d.language)
            missed = missed_all = 0
            for (a, b), code in zip(pairs, found, strict=True):
                case = Case(a, b, "paraphrase", d.language, code)
                if not CHECKS["wrong-language"](case):
                    missed += 1
                    missed_all += not any(CHECKS[c](case) for c in others)
            out.append(_miss_row("wrong-language", kind, None, d, len(pairs), missed, missed_all))
    return out


# --- the packaged result and its table ------------------------------------------------------


def packaged_path() -> Path:
    """Where the packaged measurement lives (validate/measured.json beside this module)."""
    return Path(__file__).resolve().parent / MEASURED_JSON


@cache
def measured() -> Measurement:
    """The packaged measurement (validate/measured.json); empty when it is not there."""
    path = packaged_path()
    if not path.is_file():
        return {}
    return cast(Measurement, json.loads(path.read_text(encoding="utf-8")))


def dumps(document: Measurement) -> str:
    """The measurement as measured.json holds it: one row a line, so a change shows as the
    rows it changed."""

    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    parts = [f' "{k}": {one(document[k])}' for k in ("format", "settings")]
    for key in ("false_alarms", "misses"):
        rows = ",\n".join(f"  {one(r)}" for r in document[key])
        parts.append(f' "{key}": [\n{rows}\n ]')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _mark(rate: float, goal: float) -> str:
    return " ✗" if rate > goal else ""


def _percent(rate: float) -> str:
    return f"{rate:.1%}"


def render_table(document: Measurement) -> str:
    """The guide's section body: how the figures were made, the false alarms per dataset
    and language (one column per check), and the misses per check and planted failure."""
    from shiftbench.core.tables import markdown_table

    s = document["settings"]
    goal_fa, goal_miss = s["goal"]["false_alarms"], s["goal"]["misses"]
    checks = list(CHECKS)
    table = _false_alarm_rows(document, checks, goal_fa)
    miss_rows = _miss_rows(document, goal_miss)
    lines = [
        f"Made by `{s['command']}` (language ID: {s['language_id']}; at most {s['cap']} "
        f"texts or pairs per dataset and language for false alarms, failures planted into "
        f"{s['plant_cap']} texts per dataset and language; samples seeded with {s['seed']}). "
        f"Goal: false alarms at most {goal_fa:.1%}, misses at most {goal_miss:.0%}; "
        "✗ marks a figure beyond it.",
        "",
        "**False alarms**: human-written texts checked as if they were rewrites, so every "
        'alarm is false: rate (alarms/texts). "pairs": near-paraphrase pairs (STS gold at '
        f"least {s['paraphrase_share']:.0%} of the scale, MRPC positives) as input -> "
        "output; † texts judged against an input with no marker (an upper bound); — not "
        "measured (identical: "
        + s["not_measured"]["identical"]
        + "; summary-too-long: "
        + s["not_measured"]["summary-too-long"]
        + "; runaway and truncated on single "
        "texts: a text cannot fail them against itself); n/a: language ID does not know "
        "the language.",
        "",
        markdown_table(["dataset", "language", *checks], table, tight_rule=True),
        "",
        "**Misses**: failures planted into real texts, so every pass is a miss. Held-out "
        'phrasings share nothing with markers.json; "missed by all" counts the plants no '
        "other check caught either (language ID run on translations only).",
        "",
        markdown_table(
            ["check", "planted failure", "phrasing", "planted", "missed", "rate", "missed by all"],
            miss_rows,
            align="lllrrrr",
            tight_rule=True,
        ),
    ]
    return "\n".join(lines) + "\n"


def _false_alarm_rows(document: Measurement, checks: list[str], goal: float) -> list[list[str]]:
    """The false-alarms table: per dataset and language, each check's rate (alarms/texts),
    marked beyond `goal`; n/a where language ID does not know the language, — where the
    check was not measured."""
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for r in document["false_alarms"]:
        key = (r["dataset"], r["language"])
        if r["measured"]:
            data = "" if r["data"] == "texts" else (" pairs" if r["data"] == "pairs" else " †")
            text = f"{_percent(r['rate'])} ({r['alarms']}/{r['texts']}{data})"
            cells.setdefault(key, {})[r["check"]] = text + _mark(r["rate"], goal)
        else:
            cells.setdefault(key, {})[r["check"]] = "n/a"
    return [
        [name, lang, *(cells[(name, lang)].get(c, "—") for c in checks)] for name, lang in cells
    ]


def _miss_rows(document: Measurement, goal: float) -> list[list[str]]:
    """The misses table: per check and planted failure (wrong-language per dataset and
    language), the plants missed, marked beyond `goal`; then the failures not measurable."""
    misses: dict[tuple[str, str, bool | None], list[int]] = {}
    unmeasurable: dict[tuple[str, str, bool | None], list[str]] = {}
    for m in document["misses"]:
        group: tuple[str, str, bool | None] = (m["check"], m["kind"], m["held_out"])
        if not m["measured"]:
            unmeasurable.setdefault(group, []).append(m["language"])
            continue
        if m["check"] == "wrong-language":
            group = (m["check"], f"{m['kind']}, {m['dataset']}, expected {m['language']}", None)
        total = misses.setdefault(group, [0, 0, 0])
        total[0] += m["planted"]
        total[1] += m["missed"]
        total[2] += m["missed_by_all"]
    miss_rows = []
    for (check, kind, held), (planted, missed, missed_all) in misses.items():
        rate = missed / planted if planted else 0.0
        phrasing = {True: "held-out", False: "listed", None: "—"}[held]
        miss_rows.append([check, kind, phrasing, str(planted), str(missed),
                          _percent(rate) + _mark(rate, goal), str(missed_all)])  # fmt: skip
    for (check, kind, _), languages in unmeasurable.items():
        miss_rows.append([check, f"{kind}, expected {', '.join(languages)}", "—", "0", "0",
                          "n/a", "0"])  # fmt: skip
    return miss_rows


def with_table(page: str, document: Measurement) -> str:
    """`page` (the guide) with its generated part between START and END replaced."""
    if START not in page or END not in page:
        raise InputError(f"the guide has no {START} ... {END} part to fill")
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{render_table(document)}{END}{tail}"


def guide_path() -> Path:
    """The validate guide of the source tree this module is part of."""
    return Path(__file__).resolve().parents[1] / GUIDE


def write_measurement(document: Measurement, guide: Path | None = None) -> list[Path]:
    """Write the packaged measured.json and the guide's table (the guide of this source
    tree unless `guide` names another); the paths written."""
    from shiftbench.core.data.writes import atomic_write_text

    guide = guide or guide_path()
    if not guide.is_file():
        raise InputError(f"{guide}: no such guide to write the table into")
    page = with_table(guide.read_text(encoding="utf-8"), document)
    atomic_write_text(packaged_path(), dumps(document))
    atomic_write_text(guide, page)
    measured.cache_clear()
    return [packaged_path(), guide]


# --- what a report says of a config ---------------------------------------------------------


def unreliable(languages: Iterable[str], dataset: str | None = None) -> list[str] | None:
    """The checks measured unreliable for these languages (or this dataset), each with
    its worst figures: a false-alarm rate beyond the goal on a dataset of that language
    (or that dataset), a miss rate beyond the goal on a kind of planted failure over all
    the texts of that language (a plant's miss rarely depends on the dataset it went
    into), or a language the measurement could not judge. None when no measurement is
    packaged."""
    document = measured()
    if not document:
        return None
    wanted = set(languages)
    goal = document["settings"]["goal"]
    worst: dict[tuple[str, str], tuple[float, str]] = {}  # (check, what) -> (rate, where)
    unjudged: dict[str, list[str]] = {}
    # (check, kind, held-out phrasing) -> [planted, missed]
    planted: dict[tuple[str, str, bool], list[int]] = {}
    # both kinds of row, read by the keys they share (and a miss by its own)
    tables: tuple[tuple[str, Sequence[Mapping[str, Any]]], ...] = (
        ("false alarms", document["false_alarms"]),
        ("misses", document["misses"]),
    )
    for what, rows in tables:
        for r in rows:
            if r["language"] not in wanted and r["dataset"] != dataset:
                continue
            if not r["measured"]:
                unjudged.setdefault(r["check"], []).append(r["language"])
            elif what == "misses":
                counts = planted.setdefault((r["check"], r["kind"], r["held_out"]), [0, 0])
                counts[0] += r["planted"]
                counts[1] += r["missed"]
            elif (
                r["rate"] > goal["false_alarms"]
                and r["rate"] > worst.get((r["check"], what), (0.0, ""))[0]
            ):
                where = f"on {r['dataset']} {r['language']}"
                worst[(r["check"], what)] = (r["rate"], where)
    for (check, kind, held_out), (n, missed) in planted.items():
        rate = missed / n if n else 0.0
        if rate > goal["misses"] and rate > worst.get((check, "misses"), (0.0, ""))[0]:
            phrasing = ", phrasings not in its lists" if held_out else ""
            worst[(check, "misses")] = (rate, f"of {n} planted: {kind}{phrasing}")
    out = []
    for check in CHECKS:
        reasons = [
            f"{what} {_percent(worst[(check, what)][0])} {worst[(check, what)][1]}"
            for what in ("false alarms", "misses")
            if (check, what) in worst
        ]
        if check in unjudged:
            reasons.append(f"not measurable for {', '.join(sorted(set(unjudged[check])))}")
        if reasons:
            out.append(f"{check} ({'; '.join(reasons)})")
    seen = {r["language"] for r in document["false_alarms"]}
    unseen = sorted(wanted - seen)
    if unseen:
        out.append(f"none measured on {', '.join(unseen)} text")
    return out
