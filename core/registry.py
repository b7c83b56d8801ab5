"""Named plug-ins: one registry type for backends, transforms, checks, exporters and task
evaluators.

A registry maps names to entries. An entry written as a `"package.module:attribute"`
string is imported the first time it is asked for, so a heavy dependency (vLLM, torch,
an exporter's libraries) loads only when its name is chosen; any other entry is used as
it is. An unknown name is an InputError that lists the names there are and suggests the
closest ones. Command-line choice lists are read from the registries, so adding an entry
is the only step that makes a new name valid everywhere.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable, Mapping
from typing import Any

from shiftbench.errors import InputError


def suggest(name: str, choices: Iterable[str]) -> str:
    """Close matches for a mistyped name, as a sentence tail ('' when there are none)."""
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(lowered[c] for c in close)}?" if close else ""


class Registry(dict[str, Any]):
    """Names -> entries, in registration order; `load` resolves lazy `module:attr` ones.

    Args:
        kind: What the entries are, as error messages name them ("backend", ...).
        entries: The initial entries.
    """

    def __init__(self, kind: str, entries: Mapping[str, Any] | None = None) -> None:
        super().__init__(entries or {})
        self.kind = kind

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self)

    def entry(self, name: str) -> Any:
        """The entry registered as `name`, as registered (a lazy one stays a string)."""
        try:
            return self[name]
        except KeyError:
            raise InputError(
                f"unknown {self.kind} {name!r}; available: {', '.join(self)}{suggest(name, self)}"
            ) from None

    def load(self, name: str) -> Any:
        """The object registered as `name`, imported first when it is a lazy entry."""
        found = self.entry(name)
        if isinstance(found, str) and ":" in found:
            module, _, attribute = found.partition(":")
            return getattr(importlib.import_module(module), attribute)
        return found

    def register(self, name: str, entry: Any) -> None:
        """Add `name` (a `module:attr` string or the object itself); a taken name is an
        error, so a plug-in cannot silently replace a built-in."""
        if name in self:
            raise ValueError(f"{self.kind} {name!r} is registered already")
        self[name] = entry
