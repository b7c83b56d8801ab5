"""A spec file read as YAML, safely: its size, aliases and nesting refused before any
value is built, a key given twice refused, and the line of each key kept for messages.
runner/spec.py checks the values read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from shiftbench.errors import InputError


class KeyLines:
    """Where each key path sits in the file, from YAML's node marks."""

    def __init__(self) -> None:
        self.lines: dict[tuple[Any, ...], int] = {}

    def walk(self, node: Any, at: tuple[Any, ...], where: str) -> None:
        self.lines.setdefault(at, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = key.value
                if name in seen:
                    raise InputError(f"{where}:{key.start_mark.line + 1}: {dotted((*at, name))} "
                                     "is given twice")  # fmt: skip
                seen.add(name)
                self.lines[(*at, name)] = key.start_mark.line + 1
                self.walk(value, (*at, name), where)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.walk(item, (*at, i), where)

    def line(self, at: tuple[Any, ...]) -> int:
        while at not in self.lines and at:
            at = at[:-1]
        return self.lines.get(at, 1)


def dotted(at: tuple[Any, ...]) -> str:
    """A key path as a message names it: sources[0].name."""
    out = ""
    for part in at:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# A spec names sources and settings; a file larger than this is refused unread.
MAX_SPEC_CHARACTERS = 1_000_000


MAX_SPEC_DEPTH = 32  # nesting levels; a spec's deepest value (engine_args) is at 4


def refuse_aliases(text: str, where: str) -> None:
    """Refuse YAML aliases (`*name`): a few lines of them can stand for billions of values
    (an "alias bomb"), and a spec never needs them; and refuse nesting deeper than
    MAX_SPEC_DEPTH, which building the values would recurse through for minutes before
    failing. Reads the event stream only (with libyaml where it is installed), so the
    refusal comes before anything is built."""

    def too_deep(line: int) -> InputError:
        return InputError(
            f"{where}:{line}: nested more than {MAX_SPEC_DEPTH} levels deep; a spec names "
            "sources and settings, not data"
        )

    depth = 0
    events = yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    try:
        for event in events:
            line = event.start_mark.line + 1 if event.start_mark is not None else 1
            if isinstance(event, yaml.AliasEvent):
                raise InputError(
                    f"{where}:{line}: YAML aliases (*{event.anchor}) are not allowed in a "
                    "spec; write the value out"
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_SPEC_DEPTH:
                    raise too_deep(line)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        # libyaml's scanner, reading ahead, stops at its own limit (1,000) first
        mark = getattr(exc, "problem_mark", None)
        if "nesting depth" in str(getattr(exc, "problem", "")) and mark is not None:
            raise too_deep(mark.line + 1) from None
        # any other fault is left to PyYAML's reading, which names it in its own words


def load_yaml(path: Path) -> tuple[str, Any, KeyLines]:
    """The spec file's text, its values as YAML reads them, and where each key sits; any
    problem is one InputError naming the file (and line)."""
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"spec {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"spec {path} is a folder, not a YAML file") from None
    except UnicodeDecodeError:
        raise InputError(f"spec {path} is not UTF-8 text") from None
    if len(text) > MAX_SPEC_CHARACTERS:
        raise InputError(
            f"{where}: holds {len(text):,} characters; a spec is at most "
            f"{MAX_SPEC_CHARACTERS:,} (it names sources and settings, not data)"
        )
    try:
        refuse_aliases(text, where)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        last = max(1, len(text.splitlines()))  # the end of the file is on its last line
        line = f":{min(mark.line + 1, last)}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(f"{where}{line}: not valid YAML ({problem})") from None
    except RecursionError:  # nesting the event pass above did not see (libyaml read it otherwise)
        raise InputError(
            f"{where}: nested more than {MAX_SPEC_DEPTH} levels deep; a spec names sources "
            "and settings, not data"
        ) from None
    lines = KeyLines()
    if node is not None:
        lines.walk(node, (), where)
    return text, raw, lines
