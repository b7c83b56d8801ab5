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
    naming the process where the system says which it is. A write SQLite could not make
    (a full disk, the file-size limit, a failing disk) is no fault of the file: it is
    reported as what it is, and the cache is not called unreadable."""
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
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF in (SQLITE_IOERR, SQLITE_FULL):
            raise _not_written(path, kind, exc) from None
        raise _unreadable(path, kind, exc) from None
    except sqlite3.DatabaseError as exc:
        raise _unreadable(path, kind, exc) from None


def _writable(path: Path) -> bool:
    import os

    return os.access(path.parent, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


SQLITE_IOERR, SQLITE_FULL = 10, 13  # SQLite's primary result codes for a failed read or write


def _not_written(path: Path | None, kind: str, exc: Exception) -> Exception:
    import errno
    import os

    limit = _size_limit()
    if path is not None and limit is not None:
        sizes = {}
        for name in ("", "-wal", "-shm", "-journal"):
            try:
                sizes[f"{path}{name}"] = os.stat(f"{path}{name}").st_size
            except OSError:
                continue
        # the file the write stopped in was cut at the limit itself; one past it (grown
        # before the limit was set) cannot take a write either
        stopped = [f for f, size in sizes.items() if size == limit]
        stopped += [f for f, size in sizes.items() if size > limit]
        if stopped:
            return RuntimeFault(_past_limit(f"writing {stopped[0]}", limit))
    if getattr(exc, "sqlite_errorcode", 0) & 0xFF == SQLITE_FULL:
        return OSError(errno.ENOSPC, "No space left on device", str(path))
    return RuntimeFault(
        f"the {kind} cache {path} could not be read or written ({exc}); check the disk it is "
        "on, or give another --cache-dir"
    )


def _unreadable(path: Path | None, kind: str, exc: Exception) -> InputError:
    return InputError(
        f"the {kind} cache {path} is not a readable SQLite database ({exc}); delete it (its "
        "results are made again), or give another --cache-dir"
    )


def write_fault(exc: BaseException) -> BaseException | None:
    """What a failed write stands for, when `exc` (or an exception it came from) is a write
    the system refused for want of room; None for any other failure.

    A file past the file-size limit (`ulimit -f`, EFBIG) is a RuntimeFault naming the file
    and the limit; a full disk or quota (ENOSPC, EDQUOT) is the OSError itself, which the
    command line reports as such. Code that turns a library's every failure into "the
    input is bad" asks this first, so a full disk is never blamed on the data.
    """
    import errno

    for current in exception_chain(exc):
        if isinstance(current, OSError):
            if current.errno in (errno.ENOSPC, errno.EDQUOT):
                return current
            if current.errno == errno.EFBIG:
                return RuntimeFault(_too_large(current))
    return None


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then the exception it was raised from or during, and so on back."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _too_large(exc: OSError) -> str:
    limit = _size_limit()
    name = exc.filename or _file_written(exc, limit)
    what = f"writing {name}" if name else "a write"
    if limit is None:  # then the limit is the file system's own
        return (
            f"{what} failed: the file grew past the largest file the file system takes "
            "(File too large); write elsewhere (--output, --cache-dir) and run the command again"
        )
    return _past_limit(what, limit)


def _size_limit() -> int | None:
    """The largest file this process may write, in bytes (`ulimit -f`), or None."""
    try:
        import resource
    except ImportError:  # no process limits here (Windows)
        return None
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if limit == resource.RLIM_INFINITY else limit


def _past_limit(what: str, limit: int) -> str:
    return (
        f"{what} stopped at the file-size limit of {limit:,} bytes (ulimit -f); raise the "
        "limit (ulimit -f unlimited) and run the command again"
    )


def _file_written(exc: BaseException, limit: int | None) -> str | None:
    """The file the failed write went to, found in the failing call's frames (an OSError
    from a write carries no file name): of the open files in a writing mode there, the
    innermost one that has reached the `limit`, else the innermost one."""
    import io
    import os

    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    found: list[str] = []
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            if not isinstance(value, io.IOBase):
                continue
            try:
                name, mode = getattr(value, "name", None), str(getattr(value, "mode", ""))
            except Exception:  # a wrapper whose file is gone
                continue
            if isinstance(name, str | os.PathLike) and any(m in mode for m in "wax+"):
                found.append(os.fspath(name))
    for name in found:
        try:
            if limit is not None and os.stat(name).st_size >= limit:
                return name
        except OSError:  # removed since (a staging copy): its name is all there is
            continue
    return found[0] if found else None
