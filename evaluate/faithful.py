"""Which rewritten rows are certified as meaning-preserving, for scoring on them alone.

A drop in score can come from the encoder (it misreads a faithful rewrite) or from the
generator (the rewrite lost the meaning). Scoring every variant again on the rows that a
judge, ParaPLUIE or people certified separates the two. A criterion is one of:

- `judge>=4`: the LLM judges' meaning-similarity rating (0-5) from `shiftbench validate
  --judge`; with several judges, their mean;
- `quality>=4`: the judges' rewrite-quality rating (1-5);
- `paraplue>0`: the ParaPLUIE score (log p(Yes) - log p(No));
- `<measure key><op><value>`: any measure of validation.json by its full key;
- `human` or `human>=3`: the human-eval ratings of the kept raters (the screening of
  `human-eval report`), every criterion of the scheme averaged over raters at or above
  the value (default 3, the report's threshold).

The operators are >=, >, <= and <. A row counts when every text field of it passes; a field
with no value (unscored, or not sampled for rating) does not pass.
"""

from __future__ import annotations

import operator
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.core.data.jsonfiles import read_jsonl
from shiftbench.core.data.runfolder import read_validation
from shiftbench.core.messages import option
from shiftbench.core.ratings import read_batch, read_ratings, screen
from shiftbench.errors import InputError

ALIASES = {"judge": "judge-similarity:", "quality": "judge-quality:", "paraplue": "paraplue:"}
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt,
}  # fmt: skip
HUMAN_THRESHOLD = 3.0
CRITERION = re.compile(r"^\s*(?P<name>[^<>=\s]+)\s*(?:(?P<op>>=|<=|>|<)\s*(?P<value>\S+))?\s*$")

RowKey = tuple[str, Any]  # (split, row_id)


@dataclass(frozen=True)
class CertifiedRows:
    """The rows a criterion certifies, per config, as evaluate uses them."""

    criterion: str
    rows: dict[str, set[RowKey]]


@dataclass(frozen=True)
class Faithful:
    """A parsed `--faithful` criterion."""

    text: str
    name: str
    op: str
    threshold: float

    @property
    def human(self) -> bool:
        return self.name == "human"

    def passes(self, value: float | None) -> bool:
        return value is not None and OPERATORS[self.op](value, self.threshold)


def parse_faithful(text: str) -> Faithful:
    """`judge>=4`, `paraplue>0`, `human`, ...; bad input is an InputError."""
    found = CRITERION.match(text)
    usage = "use NAME>=VALUE (judge, quality, paraplue or a measure key) or human[>=VALUE]"
    if not found:
        raise InputError(f"{option('faithful')} {text!r}: {usage}")
    name, op, value = found["name"], found["op"], found["value"]
    if name == "human" and op not in (None, ">="):
        raise InputError(
            f"{option('faithful')} {text!r}: human takes >= only (human or human>=VALUE)"
        )
    if op is None:
        if name != "human":
            raise InputError(f"{option('faithful')} {text!r}: {usage}")
        return Faithful(text, name, ">=", HUMAN_THRESHOLD)
    try:
        threshold = float(value)
    except ValueError:
        raise InputError(f"{option('faithful')} {text!r}: {value!r} is not a number") from None
    return Faithful(text, name, op, threshold)


def certified(
    folder: Path, criterion: Faithful, fields: list[str], human_dirs: Iterable[Path] = ()
) -> dict[str, set[RowKey]]:
    """Per config of the run folder, the (split, row_id) of the rows every text field of
    which passes the criterion."""
    values = (
        _human_values(folder, criterion, list(human_dirs))
        if criterion.human
        else _measure_values(folder, criterion)
    )
    out: dict[str, set[RowKey]] = {}
    for config, rows in values.items():
        out[config] = {
            key
            for key, per_field in rows.items()
            if all(criterion.passes(per_field.get(f)) for f in fields)
        }
    return out


def _measure_values(
    folder: Path, criterion: Faithful
) -> dict[str, dict[RowKey, dict[str, float | None]]]:
    report = read_validation(folder)
    if report is None:
        raise InputError(
            f"{option('faithful')} {criterion.text}: {folder} has not been validated "
            "(run 'shiftbench validate' with --judge or --paraplue first)"
        )
    configs = report.get("configs", {})
    prefix = ALIASES.get(criterion.name)
    keys = sorted(
        {
            k
            for c in configs.values()
            for k in (c.get("measures") or {})
            if (k.startswith(prefix) if prefix else k == criterion.name)
        }
    )
    if not keys:
        known = sorted({k for c in configs.values() for k in (c.get("measures") or {})})
        raise InputError(
            f"{option('faithful')} {criterion.text}: {folder}'s validation has no such measure "
            f"(it has: {', '.join(known) or 'none'})"
        )
    out: dict[str, dict[RowKey, dict[str, float | None]]] = {}
    for config in configs:
        path = folder / "validation" / f"{config}.jsonl"
        if not path.is_file():
            continue
        rows: dict[RowKey, dict[str, float | None]] = {}
        for result in read_jsonl(path, required=("split", "row_id")):
            measures = result.get("measures") or {}
            fields = {f for k in keys for f in (measures.get(k) or {})}
            rows[(result["split"], result["row_id"])] = {
                f: _mean([(measures.get(k) or {}).get(f) for k in keys]) for f in fields
            }
        out[config] = rows
    return out


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def _rated_text(item: dict[str, Any]) -> tuple[str, str, Any, str]:
    """Where a batch item's text stands: (config, split, row_id, field). A batch made before
    its items carried them has them in its item id, config/split/row_id/field."""
    if "config" in item:
        return item["config"], item["split"], item["row_id"], item["field"]
    config, split, *row, field = item["item_id"].split("/")
    row_id = "/".join(row)
    return config, split, int(row_id) if row_id.isdigit() else row_id, field


def _human_values(
    folder: Path, criterion: Faithful, human_dirs: list[Path]
) -> dict[str, dict[RowKey, dict[str, float | None]]]:

    if not human_dirs:
        sibling = folder.parent / "human-eval"  # the layout `shiftbench run` writes
        human_dirs = [sibling] if (sibling / "batch.json").is_file() else []
    if not human_dirs:
        raise InputError(
            f"{option('faithful')} {criterion.text}: name the human-eval batch folder(s) with "
            f"{option('human_dirs', '--human-eval')}"
        )
    # (config, split, row_id, field) -> criterion -> ratings of kept raters
    ratings: dict[tuple[str, str, Any, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for batch in human_dirs:
        description, table = read_batch(batch)
        if Path(description["run"]).resolve() != folder.resolve():
            raise InputError(
                f"{option('human_dirs', '--human-eval')} {batch} rates {description['run']}, "
                f"not {folder.resolve()}"
            )
        given = read_ratings(batch)
        if not given:
            raise InputError(
                f"{option('human_dirs', '--human-eval')} {batch} holds no ratings; run "
                "'human-eval import'"
            )
        kept = {r for r, e in screen(table, given).items() if e["kept"]}
        items = {r["item_id"]: r for r in table if not r["is_control"]}
        for r in given:
            item = items.get(r["item_id"])
            if item is None or r["rater_id"] not in kept:
                continue
            ratings[_rated_text(item)][r["criterion"]].append(float(r["rating"]))
    out: dict[str, dict[RowKey, dict[str, float | None]]] = defaultdict(dict)
    for (config, split, row_id, field), per_criterion in ratings.items():
        means = [statistics.fmean(v) for v in per_criterion.values()]
        # every criterion must pass: the smallest mean stands for the field
        out[config].setdefault((split, row_id), {})[field] = min(means)
    return dict(out)
