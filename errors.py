"""The two kinds of failure the CLI distinguishes.

`InputError` is a user mistake (bad name, missing file, wrong column): the CLI prints one
line and exits with 2, having written nothing. `RuntimeFault` is something that went wrong
while doing valid work (a backend that keeps failing): one line, exit 1, finished work kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class ShiftbenchError(Exception):
    """Base class for errors the CLI reports as one line."""

    exit_code = 1


class InputError(ShiftbenchError):
    """The user asked for something that cannot be done as asked."""

    exit_code = 2


class RuntimeFault(ShiftbenchError):
    """Valid work failed at run time."""

    exit_code = 1


def shown_url(url: str) -> str:
    """`url` as it may be printed or recorded: a password (or a user name) in it is
    replaced by `***`, so `http://me:secret@host/v1` shows as `http://***@host/v1`. The
    URL with its credentials is for the connection alone."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


LOCK_WAIT_SECONDS = 30.0  # how long a cache another process holds is waited for


@contextmanager
def database_faults(path: Path | None, kind: str) -> Iterator[None]:
    """A cache file that is not a readable SQLite database is an InputError naming it and
    the two ways out; one another process keeps locked past LOCK_WAIT_SECONDS is a
    RuntimeFault saying so."""
    import sqlite3

    try:
        yield
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise RuntimeFault(
                f"the {kind} cache {path} stayed locked by another process for "
                f"{LOCK_WAIT_SECONDS:g} s; wait for it to finish, or give another --cache-dir"
            ) from None
        raise _unreadable(path, kind, exc) from None
    except sqlite3.DatabaseError as exc:
        raise _unreadable(path, kind, exc) from None


def _unreadable(path: Path | None, kind: str, exc: Exception) -> InputError:
    return InputError(
        f"the {kind} cache {path} is not a readable SQLite database ({exc}); delete it (its "
        "results are made again), or give another --cache-dir"
    )
