"""Names read from files that become paths: one rule for all of them.

A run folder, results folder, HTEB tree or rating file may come from anyone. Every name
such a file holds that shiftbench turns into a path (a config, a split, a subset, a model's
folder, a batch, a rater) must be a *safe name*: one path component of letters, digits and
`. _ - +`, starting with a letter or digit, at most 200 characters, never `.` or `..`. The
path made from it must also stay inside its folder once symbolic links are followed
(`inside`), so a link planted in a shared folder cannot lead a read or a write out of it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from shiftbench.errors import InputError

# Letters, digits and . _ - + ; a letter or digit first (no hidden names, no option-like
# names), so neither `..` nor `/`, `\`, a NUL or a drive letter can get in.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,199}")
RULE = (
    "a name must be one path component of letters, digits and . _ - + (a letter or "
    "digit first, at most 200 characters)"
)


def is_safe_name(name: Any) -> bool:
    """Whether `name` is a string that may become one component of a path."""
    return isinstance(name, str) and SAFE_NAME.fullmatch(name) is not None and ".." not in name


def check_name(name: Any, where: Path | str, key: str) -> str:
    """`name` itself when it is a safe name; otherwise an InputError naming the file
    `where`, the `key` the name was read from, and the rule."""
    if is_safe_name(name):
        return str(name)
    raise InputError(f"{where}: {key} {_shown(name)} is not a safe name; {RULE}")


def inside(folder: Path, *parts: str, where: Path | str, key: str) -> Path:
    """`folder / part / ...`, refused (an InputError naming `where` and `key`) when a part
    is not a safe name or the path, with its symbolic links followed, leads out of
    `folder`."""
    for part in parts:
        check_name(part, where, key)
    path = folder.joinpath(*parts)
    base = folder.resolve()
    target = path.resolve()
    if target != base and base not in target.parents:
        raise InputError(
            f"{where}: {key} {_shown('/'.join(parts))} leads out of {folder} (a symbolic "
            f"link to {target}); a file of a folder must stay inside it"
        )
    return path


def _shown(name: Any) -> str:
    """A name as a message shows it: quoted and escaped (a newline or NUL stays on the
    line), cut after 80 characters."""
    if not isinstance(name, str):
        return f"{'null' if name is None else type(name).__name__}"
    text = repr(name[:80]) + ("..." if len(name) > 80 else "")
    return text
