"""The README's CLI reference: every command's --help, rendered at a fixed width.

`python -m shiftbench.clidoc` prints it; `python -m shiftbench.clidoc --write README.md`
replaces the part of README.md between the reference markers. A test keeps the two equal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

START = "<!-- cli-reference:start -->"
END = "<!-- cli-reference:end -->"
WIDTH = 100


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


def _split(readme: str) -> tuple[str, str, str]:
    """What comes before the reference, the reference, and what comes after it."""
    if START not in readme or END not in readme:
        raise SystemExit(f"README has no {START} ... {END} section")
    head, rest = readme.split(START, 1)
    body, tail = rest.split(END, 1)
    return head, body, tail


def section(readme: str) -> str:
    """The part of the README between the markers."""
    return _split(readme)[1].strip("\n") + "\n"


def main(argv: list[str]) -> None:
    text = reference()
    if argv[:1] == ["--write"] and len(argv) == 2:
        path = Path(argv[1])
        head, _, tail = _split(path.read_text(encoding="utf-8"))
        path.write_text(f"{head}{START}\n{text}{END}{tail}", encoding="utf-8")
        return
    sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
