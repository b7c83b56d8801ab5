"""list: the transforms, protocols, backends and presets there are, one per line."""

from __future__ import annotations

import json
from typing import Any

import click

from shiftbench.cli.commands.options import CONTEXT
from shiftbench.runner.catalog import KINDS, catalog


@click.command("list", context_settings=CONTEXT)
@click.argument("kind", metavar="KIND", type=click.Choice(KINDS))
@click.option(
    "--json", "as_json", is_flag=True,
    help="Print a JSON list of objects (every field of each entry) instead of plain lines.",
)  # fmt: skip
def list_names(kind: str, as_json: bool) -> None:
    """List what can be named: KIND is transforms, protocols, backends or presets.

    One line each, its name first: a transform with its axis ('control' for a control)
    and what it does; a protocol (gen's and evaluate's --protocol) with its summary; a
    backend (gen's --backend, a judge's) with what it runs; a preset, the same names as
    the protocols, with every setting it fixes.
    """
    entries = catalog(kind)
    if as_json:
        click.echo(json.dumps(entries, indent=2, ensure_ascii=False))
        return
    for line in _lines(kind, entries):
        click.echo(line)


def _lines(kind: str, entries: list[dict[str, Any]]) -> list[str]:
    if kind == "transforms":
        rows = [
            [e["name"], e["axis"], e["description"]
             + (f"; meaning {e['meaning']}" if e["meaning"] else "")]
            for e in entries
        ]  # fmt: skip
    elif kind == "protocols":
        rows = [[e["name"], e["description"]] for e in entries]
    elif kind == "backends":
        rows = [[e["name"], "default" if e["default"] else "", e["description"]]
                for e in entries]  # fmt: skip
    else:
        rows = [
            [e["name"], "; ".join(f"{k}: {_value(v)}" for k, v in e["settings"].items())]
            for e in entries
        ]
    # every column but the last padded to its widest cell
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join([*(row[i].ljust(w) for i, w in enumerate(widths)), row[-1]]) for row in rows]


def _value(value: Any) -> str:
    """A preset's setting on one line: lists comma-joined, mappings as KEY=VALUE."""
    if value is None or value in ({}, []):
        return "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}={'+'.join(v) if isinstance(v, list) else v}"
                         for k, v in value.items())  # fmt: skip
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)
