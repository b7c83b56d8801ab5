"""What can be named: the transforms, protocols, backends and presets the registries hold.

`shiftbench list` prints these; each entry is read from its registry (nothing here is a
second list), so a newly registered transform, protocol or backend shows at once. A
protocol is a preset of settings: `protocols` gives each one's summary and source,
`presets` every setting it fixes.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from pathlib import Path
from typing import Any

from shiftbench.core.protocols import PROTOCOLS
from shiftbench.core.registry import suggest
from shiftbench.core.text.transforms import REGISTERED
from shiftbench.errors import InputError
from shiftbench.llm.backends import BACKENDS, DEFAULT_BACKEND

KINDS = ("transforms", "protocols", "backends", "presets")
CONTROL = "control"  # the axis column of a control, which belongs to no robustness axis


def catalog(kind: str) -> list[dict[str, Any]]:
    """Every entry of one kind, in registration order, as plain data (JSON-ready).

    Args:
        kind: "transforms", "protocols", "backends" or "presets".

    Returns:
        One dict per entry, each with a "name"; transforms carry their axis ("control" for
        a control), what they do, their LLM calls per text and, for a control, the meaning
        it keeps or changes; protocols their description and citation; backends their
        description and whether they are the default; presets every setting they fix.
    """
    if kind not in KINDS:
        raise InputError(
            f"unknown kind {kind!r}; available: {', '.join(KINDS)}{suggest(kind, KINDS)}"
        )
    return {
        "transforms": _transforms,
        "protocols": _protocols,
        "backends": _backends,
        "presets": _presets,
    }[kind]()


def _transforms() -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            "axis": CONTROL if t.control else t.axis,
            "description": t.description,
            "calls": t.calls,
            "meaning": t.meaning if t.control else None,
        }
        for t in REGISTERED.values()
    ]


def _protocols() -> list[dict[str, Any]]:
    return [
        {"name": p.name, "description": p.description, "citation": p.citation}
        for p in PROTOCOLS.values()
    ]


def _backends() -> list[dict[str, Any]]:
    return [
        {"name": name, "description": _summary(entry), "default": name == DEFAULT_BACKEND}
        for name, entry in BACKENDS.items()
    ]


def _presets() -> list[dict[str, Any]]:
    # what gen records of a protocol, and what evaluate reads of it
    return [
        {
            "name": p.name,
            "settings": {
                **p.settings(),
                "failed_rows": p.failed_rows,
                "clustering_scoring": p.clustering,
                "subsets": p.subsets,
                "precision": p.precision,
                "main_scores": dict(p.main_scores),
            },
        }
        for p in PROTOCOLS.values()
    ]


def _summary(entry: Any) -> str:
    """The first sentence of a backend module's docstring, read from its source so that
    listing the backends imports none of their libraries (vLLM, torch)."""
    if isinstance(entry, str) and ":" in entry:
        spec = importlib.util.find_spec(entry.partition(":")[0])
        origin = spec.origin if spec is not None else None
        doc = ast.get_docstring(ast.parse(Path(origin).read_text(encoding="utf-8"))) if origin \
            else None  # fmt: skip
    else:  # a plug-in registered as the object itself
        doc = inspect.getdoc(entry)
    paragraph = " ".join((doc or "").strip().split("\n\n")[0].split())
    head, dot, _ = paragraph.partition(". ")
    return f"{head}." if dot else paragraph
