"""How library code speaks: through `logging`, one logger per module under "shiftbench".

Three kinds of message, by level:

- REPORT (between INFO and WARNING): a line of a command's own output that appears while
  it works, such as `run`'s stage lines, publish's plan and result, or validate's table
  rows as each config finishes. The command line prints these on stdout;
- INFO and DEBUG: what each step does, printed on stderr with `-v` and `-vv`;
- WARNING and above: printed on stderr always.

Library code never prints and takes no printing callbacks. The command line installs the
one handler that decides where each record goes (`shiftbench.cli`); a Python caller sees
the REPORT lines by giving the "shiftbench" logger a handler at that level. Progress goes
through core/progress.py, on stderr.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

REPORT = 25
logging.addLevelName(REPORT, "REPORT")

# Set while a command of the command line runs (`shiftbench.cli`): an error then names the
# command's option (--output), and a Python caller's the argument it passed (output).
_COMMAND_LINE: ContextVar[bool] = ContextVar("shiftbench_command_line", default=False)


def report(log: logging.Logger, line: str) -> None:
    """One line of the running command's own output."""
    log.log(REPORT, line)


def counted(n: int, noun: str, plural: str = "") -> str:
    """`n` with its noun in the number it takes: `1 problem`, `0 problems`, `2 problems`;
    `plural` where adding an s is wrong (`counted(n, "batch", "batches")`)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


@contextmanager
def command_line() -> Iterator[None]:
    """Within it, `option` names a setting as the command line's option."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def option(name: str, flag: str = "") -> str:
    """How an error names a setting: the command's option (`flag`, by default `name` with
    dashes: `--max-new-tokens`) under the command line, else the Python argument or
    settings field `name` (`max_new_tokens`), so that each reader sees what they typed.

    Messages are built in the thread that raises them; one built in a worker thread names
    the Python argument (a thread starts with a context of its own)."""
    if _COMMAND_LINE.get():
        return flag or "--" + name.replace("_", "-")
    return name


def differences(before: object, after: object, *, limit: int = 3) -> str:
    """What differs between two records, for a refusal to say: `revision 'a' -> 'b'`, one
    entry per differing key (nested mappings by dotted key, `sampling.temperature`), at
    most `limit` of them and a count of the rest; a key one record lacks shows as none."""
    found = _differences(before, after, "")
    shown = ", ".join(found[:limit])
    return shown + (f" and {len(found) - limit} more" if len(found) > limit else "")


_MISSING = object()


def _differences(before: object, after: object, at: str) -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        keys = [*after, *(k for k in before if k not in after)]
        return [
            line
            for k in keys
            for line in _differences(
                before.get(k, _MISSING), after.get(k, _MISSING), f"{at}.{k}" if at else str(k)
            )
        ]
    if before == after:
        return []
    return [f"{at or 'value'} {_shown(before)} -> {_shown(after)}"]


def _shown(value: object, limit: int = 60) -> str:
    """A value as a refusal shows it: repr-like, cut to `limit` characters."""
    if value is _MISSING or value is None:
        return "none"
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
