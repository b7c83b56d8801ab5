"""The generated parts of the documentation: the CLI reference and the spec's keys.

The CLI reference is every command's --help, rendered at a fixed width; the spec reference
is a table per spec section of every key with its type, default, the option it stands for
and its help, all read from the spec's schema (which reads them from the commands and the
stage settings). Each lives between its markers in a page of docs/reference/:

    python -m shiftbench.cli.clidoc            # prints the CLI reference
    python -m shiftbench.cli.clidoc --spec     # prints the spec reference
    python -m shiftbench.cli.clidoc --write    # rewrites both pages' generated parts

`--write FILE...` rewrites the generated parts of the files named instead (every part whose
markers a file holds). Tests keep the pages equal to what these functions return.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

START = "<!-- cli-reference:start -->"
END = "<!-- cli-reference:end -->"
SPEC_START = "<!-- spec-reference:start -->"
SPEC_END = "<!-- spec-reference:end -->"
WIDTH = 100

DOCS = Path(__file__).resolve().parents[1] / "docs" / "reference"
CLI_PAGE = DOCS / "cli.md"
SPEC_PAGE = DOCS / "spec.md"


def commands(
    group: click.Group, ctx: click.Context
) -> Iterator[tuple[click.Command, click.Context]]:
    for name in group.commands:
        command = group.commands[name]
        sub = command.make_context(name, [], parent=ctx, resilient_parsing=True,
                                   terminal_width=WIDTH)  # fmt: skip
        yield command, sub
        if isinstance(command, click.Group):
            yield from commands(command, sub)


def reference() -> str:
    """Every command's --help, one collapsible block each."""
    from shiftbench.cli import cli

    root = cli.make_context("shiftbench", [], resilient_parsing=True, terminal_width=WIDTH)
    parts = [_block(root.command_path, cli.get_help(root))]
    parts += [
        _block(ctx.command_path, command.get_help(ctx)) for command, ctx in commands(cli, root)
    ]
    return "\n".join(parts)


def _block(path: str, text: str) -> str:
    summary = f"<details><summary><code>{path}</code></summary>"
    return f"{summary}\n\n```\n{text.rstrip()}\n```\n\n</details>\n"


def spec_reference(fields: tuple[Any, Any] | None = None) -> str:
    """Every key of a run spec, a Markdown table per section, from the schema `fields`
    (top-level keys, sections; `schema()`'s by default)."""
    from shiftbench.runner.spec import SECTIONS, TOP_FIELDS

    top, sections = fields or (TOP_FIELDS, SECTIONS)
    parts = [_spec_table("Top level", "Keys outside any section.", top)]
    for section in sections:
        shape = "a list of mappings, one per source" if section.many else "a mapping"
        about = f"{section.help} The value is {shape}."
        parts.append(_spec_table(f"`{section.key}`", about, section.fields))
    return "\n".join(parts)


def _spec_table(title: str, help_: str, fields: tuple[Any, ...]) -> str:
    from shiftbench.cli import cli
    from shiftbench.cli.commands.specdoc import help_text, option_of, yaml_value
    from shiftbench.runner.spec import default

    rows = ["| key | type | default | option of | what it sets |", "|---|---|---|---|---|"]
    for f in fields:
        option = ""
        if f.command:
            flag = f.flag or max(option_of(f, cli).opts, key=len)
            option = f"`{f.command} {flag}`"
        shown = "(required)" if f.required else f"`{yaml_value(default(f))}`"
        cells = [f"`{f.key}`", f.kind, shown, option, _plain(help_text(f, cli))]
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return f"### {title}\n\n{help_}\n\n" + "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _plain(text: str) -> str:
    """Help text as Markdown that shows it as written (no links, emphasis or HTML)."""
    for char in "\\[]*_>":
        text = text.replace(char, "\\" + char)
    return text.replace("<", "&lt;")


def _split(text: str, start: str = START, end: str = END) -> tuple[str, str, str]:
    """What comes before the generated part, the part, and what comes after it."""
    if start not in text or end not in text:
        raise SystemExit(f"no {start} ... {end} section")
    head, rest = text.split(start, 1)
    body, tail = rest.split(end, 1)
    return head, body, tail


def section(text: str, start: str = START, end: str = END) -> str:
    """The part of a page between the markers (the CLI reference's by default)."""
    return _split(text, start, end)[1].strip("\n") + "\n"


PARTS: tuple[tuple[str, str, Callable[[], str]], ...] = (
    (START, END, reference),
    (SPEC_START, SPEC_END, spec_reference),
)


def write(path: Path) -> None:
    """Rewrite every generated part whose markers the file holds."""
    text = path.read_text(encoding="utf-8")
    found = [part for part in PARTS if part[0] in text and part[1] in text]
    if not found:
        raise SystemExit(f"{path} has no generated section (markers such as {START})")
    for start, end, make in found:
        head, _, tail = _split(text, start, end)
        text = f"{head}{start}\n{make()}{end}{tail}"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--write"]:
        for name in argv[1:] or [str(CLI_PAGE), str(SPEC_PAGE)]:
            write(Path(name))
        return
    sys.stdout.write(spec_reference() if argv[:1] == ["--spec"] else reference())


if __name__ == "__main__":
    main(sys.argv[1:])
