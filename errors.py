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


class CacheLocked(RuntimeFault):
    """A cache stayed locked by another process: the cache, not the backend, stopped the
    work, and nothing more could be kept in it."""


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


LOCK_WAIT_SECONDS = 30.0  # how long a cache another process holds is waited for, by default


def env_seconds(name: str, default: float, *, zero_ok: bool = False) -> float:
    """A number of seconds from the environment variable `name`, or `default` when it is
    unset or empty; a value that is not a number, negative (or zero, unless `zero_ok`) is
    an InputError naming the variable."""
    import os

    value = os.environ.get(name, "")
    if not value:
        return default
    try:
        seconds = float(value)
    except ValueError:
        raise InputError(f"{name}={value!r} is not a number of seconds") from None
    if not (seconds >= 0 if zero_ok else seconds > 0):
        bound = "0 or more" if zero_ok else "more than 0"
        raise InputError(f"{name}={value!r} must be {bound} seconds")
    return seconds


def lock_wait() -> float:
    """Seconds a cache that another process holds is waited for: SHIFTBENCH_LOCK_WAIT, or
    LOCK_WAIT_SECONDS."""
    return env_seconds("SHIFTBENCH_LOCK_WAIT", LOCK_WAIT_SECONDS, zero_ok=True)


def lock_holders(path: Path) -> list[int]:
    """The other processes that hold a lock on the SQLite database `path` (or on its
    -wal, -shm or -journal file), as the system's lock table (/proc/locks) lists them;
    none where there is no such table."""
    import os

    ids = set()
    for name in ("", "-wal", "-shm", "-journal"):
        try:
            stat = os.stat(f"{path}{name}")
        except OSError:
            continue
        ids.add(f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}")
    try:
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return []
    holders = set()
    for line in table.splitlines():
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 8081 fe:00:2146642 120 120"; a blocked waiter's
        # line is marked "->" and names the waiter, not a holder
        if len(fields) >= 6 and fields[1] != "->" and fields[5] in ids and fields[4].isdigit():
            holders.add(int(fields[4]))
    holders.discard(os.getpid())
    return sorted(holders)


@contextmanager
def database_faults(path: Path | None, kind: str) -> Iterator[None]:
    """A cache file that is not a readable SQLite database is an InputError naming it and
    the two ways out; one another process keeps locked past lock_wait() is a RuntimeFault
    naming the process where the system says which it is."""
    import sqlite3

    try:
        yield
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            holders = lock_holders(path) if path is not None else []
            pids = f" (pid {', '.join(map(str, holders))})" if holders else ""
            raise CacheLocked(
                f"the {kind} cache {path} stayed locked by another process{pids} for "
                f"{lock_wait():g} s; wait for it to finish, or give another --cache-dir"
            ) from None
        if "readonly" in str(exc) or (path is not None and not _writable(path)):
            # the file, or its folder, may be read but not written (a read-only disk)
            raise InputError(
                f"the {kind} cache {path} cannot be written ({exc}); give another --cache-dir "
                "(or set SHIFTBENCH_CACHE_DIR)"
            ) from None
        raise _unreadable(path, kind, exc) from None
    except sqlite3.DatabaseError as exc:
        raise _unreadable(path, kind, exc) from None


def _writable(path: Path) -> bool:
    import os

    return os.access(path.parent, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


def _unreadable(path: Path | None, kind: str, exc: Exception) -> InputError:
    return InputError(
        f"the {kind} cache {path} is not a readable SQLite database ({exc}); delete it (its "
        "results are made again), or give another --cache-dir"
    )
