"""A command's options built from a stage's settings fields.

Each declared field of a settings dataclass (`shiftbench.core.settings.Declared`: help,
section, flags, metavar) becomes one option of the command, typed by the field: a bound
gives the range or the choices, a bool a flag, a tuple a repeatable option that also takes
comma-separated values (a tuple of paths: folders), a mapping a repeatable
KEY=VALUE option (NAME=TEXT for a mapping of texts), a (I, N) pair I/N. The command's
values then become the settings by name (`settings_values`), and its --help sections come
from the fields' sections (`settings_sections`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

import click

from shiftbench.cli.commands.options import OutputFolder, option_type
from shiftbench.core.settings import (
    Declared,
    bare,
    bound,
    declarations,
    field_default,
    key_values,
)
from shiftbench.errors import InputError


def _is_pair(kind: Any) -> bool:
    return get_origin(kind) is tuple and get_args(kind) == (int, int)


def _is_list(kind: Any) -> bool:
    return get_origin(kind) is tuple and not _is_pair(kind)


def _is_mapping(kind: Any) -> bool:
    return kind is dict or get_origin(kind) is dict


def param_name(f: dataclasses.Field[Any], d: Declared) -> str:
    """The option's parameter name (and the spec's key) of a declared field."""
    return d.key or f.name


def flags(f: dataclasses.Field[Any], d: Declared) -> tuple[str, ...]:
    """The option's names: the declared ones, else --field-name."""
    return d.flags or ("--" + param_name(f, d).replace("_", "-"),)


class ListOption(click.Option):
    """A repeatable option whose default --help shows as users type it: es,fr,de."""

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        default = self.get_default(ctx, call=False)
        if "default" in extra and isinstance(default, list | tuple):
            shown = (f"{x:g}" if isinstance(x, float) else str(x) for x in default)
            extra["default"] = ",".join(shown)
        return extra


def _option(
    owner: Any, f: dataclasses.Field[Any], d: Declared, hint: Any, change: Mapping[str, Any]
) -> Callable[..., Any]:
    kind = bare(hint)
    extra: dict[str, Any] = {"help": d.help, "metavar": d.metavar}
    if d.show_default:
        extra["show_default"] = d.show_default
    if bound(owner, f.name) is not None:  # a tuple of choices: each repeat one of them
        extra.update(
            type=option_type(owner, f.name), default=field_default(f), multiple=_is_list(kind)
        )
    elif kind is bool:  # a --flag/--no-flag pair may be on by default
        extra.update(is_flag=True, default=field_default(f))
    elif _is_list(kind) or _is_mapping(kind):
        default = field_default(f)
        listed = default if isinstance(default, tuple) else None
        extra.update(multiple=True, default=listed, cls=ListOption)
        if _is_list(kind) and get_args(kind)[0] is Path:  # a list of paths: of folders
            extra.update(type=click.Path(exists=d.exists, file_okay=False, path_type=Path))
        elif _is_list(kind):  # text, whatever the default: read by settings_values
            extra.update(type=click.STRING)
    elif kind is Path:
        path = click.Path(exists=d.exists, dir_okay=not d.file, path_type=Path)
        extra.update(type=OutputFolder() if d.written else path)
    elif kind in (int, float):  # a number with no bound; None would read as text
        extra.update(type=kind, default=field_default(f))
    else:
        extra.update(default=field_default(f))
    extra.update(change)
    if extra.get("required") and extra.get("default", 0) is None:
        del extra["default"]  # click takes a given None as a value: nothing would be missing
    return click.option(*flags(f, d), param_name(f, d), **extra)


def settings_options(
    owner: Any,
    skip: Sequence[str] = (),
    changes: Mapping[str, Mapping[str, Any]] | None = None,
) -> Callable[..., Any]:
    """A decorator adding an option for each declared field of settings class `owner`
    (those named in `skip` aside), in field order. `changes` gives a field's option other
    click arguments in this command (card and publish share ReleaseSettings but not
    every default, help or requirement)."""
    hints = get_type_hints(owner)
    changes = changes or {}
    options = [
        _option(owner, f, d, hints[f.name], changes.get(f.name, {}))
        for f, d in declarations(owner)
        if f.name not in skip
    ]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            func = option(func)
        return func

    return decorate


def settings_sections(
    owner: Any, order: Sequence[str], extra: Mapping[str, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """--help's sections: each title (in `order`, then any new one a field names) with the
    command's own parameters of that section (`extra`) and then its fields' options."""
    titles = list(dict.fromkeys([*order, *extra]))
    titles += [d.section for _, d in declarations(owner) if d.section not in titles]
    found: dict[str, tuple[str, ...]] = {}
    for title in titles:
        named = [param_name(f, d) for f, d in declarations(owner) if d.section == title]
        found[title] = (*extra.get(title, ()), *named)
    return found


def settings_values(owner: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The settings fields of `owner` from a command's values by parameter name: lists
    split at commas (an empty one is the field's default), I/N as (I, N), KEY=VALUE
    pairs as a mapping."""
    hints = get_type_hints(owner)
    found: dict[str, Any] = {}
    for f, d in declarations(owner):
        name = param_name(f, d)
        if name in given:
            found[f.name] = _value(given[name], bare(hints[f.name]), f, d)
    return found


def _value(value: Any, kind: Any, f: dataclasses.Field[Any], d: Declared) -> Any:
    flag = flags(f, d)[0]
    if _is_mapping(kind):
        if get_args(kind)[1:] == (str,):  # texts, taken as typed
            return _named_texts(value or (), flag)
        return key_values(value or (), flag)
    if _is_pair(kind):
        return None if value is None else _pair(value, flag)
    if not _is_list(kind):
        return value
    if d.separator:
        value = [p.strip() for v in value or () for p in v.split(d.separator) if p.strip()]
    if not value:
        return field_default(f)
    if get_args(kind)[0] is int:
        return tuple(dict.fromkeys(_whole(v, flag) for v in value))
    return tuple(value)


def _named_texts(pairs: Sequence[str], flag: str) -> dict[str, str]:
    """`NAME=TEXT` strings as a mapping; NAME may be any word (a task name, STS-query),
    TEXT is kept as typed, spaces and all."""
    found: dict[str, str] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise InputError(f"{flag} {pair!r} is not NAME=TEXT")
        found[name.strip()] = text
    return found


def _whole(text: str, flag: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{flag} takes whole numbers, not {text!r}") from None


def _pair(text: str, flag: str) -> tuple[int, int]:
    """ "I/N" as (I, N), with 0 <= I < N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise InputError(f"{flag} takes I/N (e.g. 0/4), not {text!r}") from None
    if not 0 <= index < count:
        raise InputError(f"{flag} {text}: I must be from 0 to N-1")
    return index, count
