"""Bounds of the stage settings: each range or set of choices is written once, on the
settings field it limits.

A stage's settings dataclass marks a limited field with `ranged(...)` or `chosen(...)`
and calls `check(self)` from `__post_init__`, so a library user who builds
`GenSettings(top_p=1.5)` hears about it at once. The CLI builds its option types from the
same bounds (`shiftbench.cli.commands.options.option_type`), and the spec reader checks a
spec's values against them; none of the three keeps its own copy.

    >>> from shiftbench import GenSettings
    >>> GenSettings(top_p=1.5)
    Traceback (most recent call last):
    ...
    shiftbench.errors.InputError: GenSettings.top_p: 1.5 is not in the range 0<x<=1.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from shiftbench.errors import InputError

BOUND = "shiftbench.bound"  # the metadata key of a field's Bound
DECLARED = "shiftbench.declared"  # the metadata key of a field's Declared


@dataclass(frozen=True)
class Bound:
    """What values a setting may take: a number range, or a set of words.

    Attributes:
        kind: int or float for a range; str for choices.
        low: The smallest allowed number (None: no floor).
        high: The largest allowed number (None: no ceiling).
        low_open: `low` itself is not allowed.
        high_open: `high` itself is not allowed.
        choices: The allowed words, in the order help shows them.
    """

    kind: type = str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()

    def describe(self) -> str:
        """The range as `0<x<=1`, `x>=1`, `x<5`; the choices as `'a', 'b'`."""
        if self.choices:
            return ", ".join(repr(c) for c in self.choices)
        low = "" if self.low is None else f"{self.low}{'<' if self.low_open else '<='}"
        high = "" if self.high is None else f"{'<' if self.high_open else '<='}{self.high}"
        if self.low is not None and self.high is None:
            return f"x{'>' if self.low_open else '>='}{self.low}"
        return f"{low}x{high}"

    def problem(self, value: Any) -> str | None:
        """Why `value` is not allowed (one sentence), or None when it is."""
        if self.choices:
            if value in self.choices:
                return None
            return f"{value!r} is not one of {self.describe()}."
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{value!r} is not {'an integer' if self.kind is int else 'a number'}."
        if self.kind is int and not isinstance(value, int):
            return f"{value!r} is not an integer."
        if self.kind is float:
            value = float(value)
        too_low = self.low is not None and (
            value < self.low or (self.low_open and value == self.low)
        )
        too_high = self.high is not None and (
            value > self.high or (self.high_open and value == self.high)
        )
        if too_low or too_high:
            return f"{value} is not in the range {self.describe()}."
        return None


@dataclass(frozen=True)
class Declared:
    """What the command line, the spec and the docs say of a setting, written once on its
    field: the option and the spec key are built from it (`shiftbench.cli.commands.
    from_settings`, `shiftbench.runner.spec`).

    Attributes:
        help: The option's help (and the spec key's, unless `spec_help` is given).
        section: The --help section the option is listed under (e.g. "Backend").
        flags: The option's names (e.g. "--transform", "-t"); empty: --field-name.
        key: The option's parameter name and the spec key, where not the field's name.
        metavar: The option's metavar.
        show_default: Show the default in --help (a string: shown as written).
        spec: Where the spec holds the key: "" the settings' own section, "top" the top
            level, another word that section; None: the spec has no such key.
        spec_help: The spec key's help, where it says more (or other) than the option's.
        path: The spec's value is a path, read from the spec file's folder.
        single: The spec's list also takes one string (as a one-item list).
        separator: What a list option's value may be split at ("": never; a path may
            hold a comma).
        written: The option names a folder the command writes (checked before any work).
        file: The option names a file to read, never a folder.
        exists: The option's paths (folders, for a list) must exist.
        spec_default: The spec's default, where it is not the setting's (None: the
            setting's).
        spec_list: The spec takes a list of the setting's values, the stage running once
            for each (export's formats); its default: the setting's alone.
    """

    help: str
    section: str = ""
    flags: tuple[str, ...] = ()
    key: str = ""
    metavar: str | None = None
    show_default: bool | str = False
    spec: str | None = ""
    spec_help: str = ""
    path: bool = False
    single: bool = False
    separator: str = ","
    written: bool = False
    file: bool = False
    exists: bool = False
    spec_default: Any = None
    spec_list: bool = False


def _metadata(limit: Bound | None, declare: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {} if limit is None else {BOUND: limit}
    if declare:
        found[DECLARED] = Declared(**declare)
    return found


def ranged(
    default: Any,
    kind: type = int,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    **declare: Any,
) -> Any:
    """A settings field whose numbers must lie in a range (None is always allowed: it
    means "not set"); `declare` holds its Declared (help, section, ...)."""
    bound = Bound(kind, low, high, low_open, high_open)
    return dataclasses.field(default=default, metadata=_metadata(bound, declare))


def chosen(default: Any, *choices: str, **declare: Any) -> Any:
    """A settings field whose word (or, for a tuple, each word) must be one of `choices`;
    `declare` holds its Declared (help, section, ...)."""
    bound = Bound(str, choices=choices)
    return dataclasses.field(default=default, metadata=_metadata(bound, declare))


def declared(default: Any = None, *, factory: Any = None, **declare: Any) -> Any:
    """A settings field with its Declared (help, section, ...) and no bound; `factory`
    makes a mutable default."""
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=_metadata(None, declare))
    return dataclasses.field(default=default, metadata=_metadata(None, declare))


def declarations(owner: Any) -> list[tuple[dataclasses.Field[Any], Declared]]:
    """The fields of settings class `owner` that carry a Declared, in field order."""
    return [
        (f, f.metadata[DECLARED])
        for f in dataclasses.fields(owner)
        if isinstance(f.metadata.get(DECLARED), Declared)
    ]


def bare(hint: Any) -> Any:
    """A settings field's type without its `| None`."""
    if get_origin(hint) in (UnionType, Union):
        return next(a for a in get_args(hint) if a is not type(None))
    return hint


def field_default(f: dataclasses.Field[Any]) -> Any:
    """A settings field's default value (a fresh one from its factory)."""
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def bound(owner: Any, name: str) -> Bound | None:
    """The bound of settings class `owner`'s field `name`, or None when it has none."""
    for f in dataclasses.fields(owner):
        if f.name == name:
            found = f.metadata.get(BOUND)
            return found if isinstance(found, Bound) else None
    return None


def problem(owner: Any, name: str, value: Any) -> str | None:
    """Why `value` cannot be `owner`'s `name` (each item of a list or tuple checked), or
    None when it can."""
    limit = bound(owner, name)
    if limit is None or value is None:
        return None
    for item in value if isinstance(value, list | tuple) else (value,):
        found = limit.problem(item)
        if found is not None:
            return found
    return None


def check(settings: Any) -> None:
    """Raise InputError naming the first field of `settings` that is out of its bound."""
    owner = type(settings)
    for f in dataclasses.fields(owner):
        found = problem(owner, f.name, getattr(settings, f.name))
        if found is not None:
            raise InputError(f"{owner.__name__}.{f.name}: {found}")


def key_values(pairs: tuple[str, ...] | list[str], option: str) -> dict[str, Any]:
    """`KEY=VALUE` strings (an option given several times) as a mapping; a value is JSON
    when it parses as JSON (numbers, booleans, objects) and a string otherwise. A key may
    use - for _."""
    import json

    found: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key.isidentifier():
            raise InputError(f"{option} {pair!r} is not KEY=VALUE")
        try:
            found[key] = json.loads(raw)
        except json.JSONDecodeError:
            found[key] = raw
    return found
