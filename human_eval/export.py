"""Exporters: a batch's item table into what raters work with.

`html`: one self-contained form per batch (no server, no network). A rater enters an id and
rates every item; answers survive a reload (the browser's local storage), progress is
shown, and the ratings download as CSV once every item is answered. Item texts travel as
JSON inside the page and are only ever set as text, never parsed as HTML.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

from shiftbench.errors import InputError
from shiftbench.validate.judge import instruction

EXPORT_DIR = "export"
FORMATS = ("html",)


def by_batch(table: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    batches: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in table:
        batches[row["batch_id"]].append(row)
    return {b: sorted(rows, key=lambda r: r["position"]) for b, rows in sorted(batches.items())}


def _instruction(row: dict[str, Any], scheme: dict[str, Any]) -> str:
    if scheme.get("symmetric") or row["transform"] is None:
        return ""
    return instruction(row["transform"], row["language"]).capitalize() + "."


def _script_json(value: Any) -> str:
    """JSON that cannot end the <script> element it sits in, whatever the texts hold."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def export_html(description: dict[str, Any], table: list[dict[str, Any]], out: Path) -> list[Path]:
    """One form per batch: <out>/<batch_id>.html."""
    template = (resources.files("shiftbench.human_eval") / "form.html").read_text(encoding="utf-8")
    scheme = description["scheme"]
    labels = (
        {"a": "Text A", "b": "Text B"}
        if scheme.get("symmetric")
        else {"a": "Original", "b": "Rewrite"}
    )
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for batch_id, rows in by_batch(table).items():
        items = [
            {
                "item_id": r["item_id"],
                "text_a": r["text_a"],
                "text_b": r["text_b"],
                "instruction": _instruction(r, scheme)
                if not r["is_control"]
                else _control_instruction(rows, scheme),
            }
            for r in rows
        ]
        data = {
            "title": f"Rating batch {batch_id}",
            "batch_id": batch_id,
            "scheme": {k: scheme[k] for k in ("instructions", "criteria") if k in scheme},
            "labels": labels,
            "items": items,
        }
        data["form_id"] = hashlib.sha256(_script_json(data).encode("utf-8")).hexdigest()[:16]
        page = template.replace("__DATA__", _script_json(data), 1)
        path = out / f"{batch_id}.html"
        path.write_text(page, encoding="utf-8")
        written.append(path)
    return written


def _control_instruction(rows: list[dict[str, Any]], scheme: dict[str, Any]) -> str:
    """A control pair shows the instruction of a real item next to it, so that nothing
    on the page tells it apart."""
    if scheme.get("symmetric"):
        return ""
    for r in rows:
        if not r["is_control"]:
            return _instruction(r, scheme)
    return ""


EXPORTERS = {"html": export_html}


def export(
    description: dict[str, Any], table: list[dict[str, Any]], fmt: str, out: Path
) -> list[Path]:
    if fmt not in EXPORTERS:
        raise InputError(f"unknown export format {fmt!r}; available: {', '.join(EXPORTERS)}")
    return EXPORTERS[fmt](description, table, out)
