"""Rating batches: a seeded, stratified sample of a run folder's rewrites, plus controls.

A batch is what one rater rates. Every batch holds the same sampled items and its own
control items, in an order of its own; for a symmetric scheme (similarity) the two texts
of each pair are also shown in an order of its own. Everything comes from one seed, so
the same command gives the same batches byte for byte.

The result is one long table, one row per (batch, item), which every exporter reads:
batch_id, position, item_id, stratum, text_a, text_b, swapped, is_control, control,
expected (criterion -> rating, controls only), tolerance, and where the item came from.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from shiftbench import __version__
from shiftbench.core.data.jsonfiles import read_jsonl
from shiftbench.core.data.listfields import refuse_listed
from shiftbench.core.data.runfolder import read_meta, usable
from shiftbench.core.ratings import BATCH_FILE, ITEMS_FILE
from shiftbench.core.records import BatchDescription, RunMeta
from shiftbench.errors import InputError

SCHEMES = ("quality", "similarity")


@cache
def packaged_scheme(name: str) -> dict[str, Any]:
    path = resources.files("shiftbench.human_eval") / "schemes" / f"{name}.json"
    scheme: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return scheme


def load_scheme(name: str, override: Path | None = None) -> dict[str, Any]:
    """A packaged scheme, or a user's JSON file of the same shape (instructions, labels,
    examples in the user's words)."""
    if name not in SCHEMES:
        raise InputError(f"unknown scheme {name!r}; available: {', '.join(SCHEMES)}")
    if override is None:
        return packaged_scheme(name)
    try:
        scheme = json.loads(override.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"scheme file {override} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"scheme file {override} is not JSON ({exc})") from None
    check_scheme(scheme, str(override))
    return dict(scheme)


def check_scheme(scheme: Any, where: str) -> None:
    """Every criterion needs a question, a scale of numbers and a label per point."""
    if not isinstance(scheme, dict) or not isinstance(scheme.get("criteria"), dict):
        raise InputError(f"{where}: a scheme is an object with 'criteria'")
    if not scheme["criteria"]:
        raise InputError(f"{where}: the scheme has no criteria")
    for name, c in scheme["criteria"].items():
        scale = c.get("scale") if isinstance(c, dict) else None
        if not isinstance(scale, list) or len(scale) < 2:
            raise InputError(f"{where}: criterion {name!r} needs a scale of two or more points")
        if not all(isinstance(p, int | float) for p in scale):
            raise InputError(f"{where}: criterion {name!r} has a scale point that is not a number")
        labels = c.get("labels") or {}
        missing = [p for p in scale if str(p) not in labels]
        if missing:
            raise InputError(f"{where}: criterion {name!r} has no label for point {missing[0]}")
        if not c.get("question"):
            raise InputError(f"{where}: criterion {name!r} has no question")


@dataclass(frozen=True)
class Plan:
    scheme: dict[str, Any]
    per_stratum: int
    raters: int
    controls: int  # pairs of controls (one easy positive, one easy negative) per batch
    tolerance: float
    seed: int
    by_language: bool = True


def _rng(*parts: object) -> random.Random:
    blob = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return random.Random(int.from_bytes(hashlib.sha256(blob).digest()[:8], "big"))


def candidates(folder: Path) -> tuple[RunMeta, dict[str, list[dict[str, Any]]]]:
    """Every rewritten text that evaluate scores (status ok, or identical for a
    back-translation), grouped by stratum: the transform, and for outputs in another
    language than their original, the output's language as well."""
    meta = read_meta(folder)
    refuse_listed(meta["source"], "human-eval")
    fields = meta["source"]["text_fields"]
    strata: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name, config in meta["configs"].items():
        if config.get("kind") != "transform":
            continue
        source_language = config.get("source_language")
        for path in sorted((folder / name).glob("*.jsonl")):
            for row in read_jsonl(path, required=("row_id",)):
                if not usable(row.get("status"), config.get("transform")):
                    continue
                for field in fields:
                    output = row.get(field)
                    if not isinstance(output, str) or not output.strip():
                        continue
                    language = row.get(f"language_{field}")
                    stratum = config["transform"]
                    own = config.get("source_languages", {}).get(field, source_language)
                    if language and language != own:
                        stratum += f"/{language}"
                    strata[stratum].append(
                        {
                            "item_id": f"{name}/{path.stem}/{row['row_id']}/{field}",
                            "stratum": stratum,
                            "config": name,
                            "transform": config["transform"],
                            "axis": config.get("axis"),
                            "split": path.stem,
                            "row_id": row["row_id"],
                            "field": field,
                            "language": language,
                            "original": str(row.get(f"original_{field}") or ""),
                            "output": output,
                        }
                    )
    if not strata:
        raise InputError(f"{folder} has no rewritten texts of status ok to rate")
    return meta, dict(sorted(strata.items()))


def near_identical(text: str) -> str:
    """The text with a change that does not touch its meaning: final punctuation."""
    stripped = text.rstrip()
    if stripped.endswith((".", "!", "?", "。")):
        return stripped[:-1].rstrip()
    return stripped + "."


def _overlap(a: str, b: str) -> float:
    wa, wb = set(a.lower().split()), set(b.lower().split())
    return len(wa & wb) / len(wa | wb) if wa | wb else 1.0


def build(folder: Path, plan: Plan) -> tuple[BatchDescription, list[dict[str, Any]]]:
    """The batch description and its long item table."""
    meta, strata = candidates(folder)
    if not plan.by_language:
        merged: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for items in strata.values():
            for item in items:
                merged[item["transform"]].append({**item, "stratum": item["transform"]})
        strata = dict(sorted(merged.items()))
    sampled: list[dict[str, Any]] = []
    sizes = {}
    for stratum, items in strata.items():
        chosen = _rng(plan.seed, "sample", stratum).sample(items, min(plan.per_stratum, len(items)))
        sampled += sorted(chosen, key=lambda i: i["item_id"])
        sizes[stratum] = {"available": len(items), "sampled": len(chosen)}
    originals = sorted({i["original"] for items in strata.values() for i in items})
    criteria = plan.scheme["criteria"]
    symmetric = bool(plan.scheme.get("symmetric"))
    table: list[dict[str, Any]] = []
    for b in range(plan.raters):
        batch_id = f"b{b + 1:02d}"
        rows = [_item_row(batch_id, i) for i in sampled]
        rows += _controls(batch_id, originals, plan, criteria)
        order = _rng(plan.seed, "order", batch_id)
        order.shuffle(rows)
        for position, row in enumerate(rows, start=1):
            row["position"] = position
            if symmetric and order.random() < 0.5:
                row["text_a"], row["text_b"] = row["text_b"], row["text_a"]
                row["swapped"] = True
        table += rows
    description: BatchDescription = {
        "format": 1,
        "shiftbench_version": __version__,
        "run": str(folder.resolve()),
        "source": {k: meta["source"].get(k) for k in ("name", "dataset_path", "revision")},
        "scheme": plan.scheme,
        "seed": plan.seed,
        "raters": plan.raters,
        "per_stratum": plan.per_stratum,
        "controls_per_batch": 2 * plan.controls,
        "tolerance": plan.tolerance,
        "strata": sizes,
        "items_per_batch": len(sampled) + 2 * plan.controls,
    }
    short = {
        stratum: {"asked": plan.per_stratum, "sampled": size["sampled"]}
        for stratum, size in sizes.items()
        if size["sampled"] < plan.per_stratum
    }
    if short:  # said in the record, not left to a comparison of two numbers
        description["short_strata"] = short
    return description, table


def _item_row(batch_id: str, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "batch_id": batch_id,
        "position": 0,
        "item_id": item["item_id"],
        "stratum": item["stratum"],
        # where the rated text stands, so that evaluate --faithful human finds its row
        "config": item["config"],
        "split": item["split"],
        "row_id": item["row_id"],
        "field": item["field"],
        "transform": item["transform"],
        "axis": item["axis"],
        "language": item["language"],
        "text_a": item["original"],
        "text_b": item["output"],
        "swapped": False,
        "is_control": False,
        "control": None,
        "expected": None,
        "tolerance": None,
    }


def _controls(
    batch_id: str, originals: list[str], plan: Plan, criteria: dict[str, Any]
) -> list[dict[str, Any]]:
    """Easy positives (a text and itself without its final punctuation: top marks) and
    easy negatives (two unrelated texts: the bottom of the meaning scales)."""
    rng = _rng(plan.seed, "controls", batch_id)
    rows = []
    for k in range(plan.controls):
        anchor = rng.choice(originals)
        pool = rng.sample(originals, min(len(originals), 20))
        other = min(pool, key=lambda t: (_overlap(anchor, t), t))
        for kind, text_b in (("positive", near_identical(anchor)), ("negative", other)):
            expected = {}
            for name, c in criteria.items():
                top, bottom = max(c["scale"]), min(c["scale"])
                # Fluency-like criteria judge the second text alone: a real sentence
                # either way, so the top mark.
                meaning = c.get("about", "meaning") == "meaning"
                expected[name] = top if kind == "positive" or not meaning else bottom
            rows.append(
                {
                    "batch_id": batch_id,
                    "position": 0,
                    "item_id": f"control/{batch_id}/{kind}-{k + 1}",
                    "stratum": "control",
                    "transform": None,
                    "axis": None,
                    "language": None,
                    "text_a": anchor,
                    "text_b": text_b,
                    "swapped": False,
                    "is_control": True,
                    "control": kind,
                    "expected": expected,
                    "tolerance": plan.tolerance,
                }
            )
    return rows


def write(out: Path, description: BatchDescription, table: list[dict[str, Any]]) -> None:
    """batch.json and items.jsonl into `out` (which must not hold a batch already)."""
    if (out / BATCH_FILE).exists():
        raise InputError(f"{out} already holds a batch; choose another --output")
    out.mkdir(parents=True, exist_ok=True)
    (out / ITEMS_FILE).write_text(
        "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in table),
        encoding="utf-8",
    )
    (out / BATCH_FILE).write_text(
        json.dumps(description, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
