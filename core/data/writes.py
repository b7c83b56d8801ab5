"""Folders and files written safely: one writer per folder (an flock), new folders staged
beside their target and renamed into place, files replaced whole, scratch folders in the
temporary folder, and what killed runs left behind removed by the next.
"""

from __future__ import annotations

import glob
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from shiftbench.core.messages import option, report
from shiftbench.errors import InputError, RuntimeFault

log = logging.getLogger(__name__)


def unwritable(path: Path) -> str | None:
    """Why the folder `path` (which need not exist yet) cannot be written, or None: a part
    of it is a file, or the nearest folder of it that exists is on a read-only file
    system or not writable by this user."""
    for part in (path, *path.parents):
        if not part.exists():
            continue
        if not part.is_dir():
            return f"{part} is a file, not a folder" if part != path else "it is a file"
        if os.access(part, os.W_OK):
            return None
        read_only = hasattr(os, "statvfs") and os.statvfs(part).f_flag & os.ST_RDONLY
        why = "a read-only file system" if read_only else "no permission to write"
        return f"{part} cannot be written ({why})"
    return None


@contextmanager
def writing(path: Path, *, wait: float | None = None) -> Iterator[None]:
    """Hold the folder `path` for one writer. The lock is an flock on a file in the
    temporary folder keyed by the folder's absolute path, so the folder and its parent
    need not exist yet and nothing is written beside them; the system drops it when its
    holder exits, however it exits.

    With `wait` None (gen's run folders: a second gen would redo the first's work), a
    second process that asks while the first holds it is refused at once with one line
    naming the holder's pid. With `wait` seconds (evaluate's results folders, whose
    writes are short and add to each other), it waits that long for the holder, then
    stops with a RuntimeFault naming the holder."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): one writer at a time is up to the user
        yield
        return
    with open(_lock_file(path), "a+", encoding="utf-8") as handle:
        _lock(handle, path, wait)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        _HELD.add(path.resolve())
        try:
            yield
        finally:
            _HELD.discard(path.resolve())
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def _lock_file(path: Path) -> Path:
    """The lock file of folder `path`: in the temporary folder, named by a hash of the
    folder's absolute path."""
    import hashlib

    folder = Path(tempfile.gettempdir()) / "shiftbench-locks"
    folder.mkdir(exist_ok=True)
    # the path as the system holds it: a name the locale cannot decode (a non-ASCII
    # folder under LC_ALL=C) comes back to its own bytes rather than failing to encode
    key = hashlib.sha256(os.fsencode(path.resolve())).hexdigest()[:32]
    return folder / f"{key}.lock"


def _lock(handle: IO[str], path: Path, wait: float | None) -> None:
    """Takes the flock on the open lock file `handle`: refused at once while another
    process holds it (`wait` None), else waited for up to `wait` seconds."""
    import fcntl
    import time

    deadline = None if wait is None else time.monotonic() + wait
    told = False
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "?"
        if deadline is None:
            raise InputError(
                f"output {path} is being written by another shiftbench process (pid "
                f"{holder}); wait for it to finish, or choose another {option('output')}"
            ) from None
        if time.monotonic() >= deadline:
            raise RuntimeFault(
                f"output {path} stayed locked by another shiftbench process (pid "
                f"{holder}) for {wait or 0:g} s; wait for it to finish, or choose another "
                f"{option('output')}"
            ) from None
        if not told:  # said once, so that a pause has its reason on screen
            report(
                log,
                f"output {path} is being written by another shiftbench process (pid "
                f"{holder}); waiting up to {wait or 0:g} s",
            )
            told = True
        time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))


_HELD: set[Path] = set()  # the folders this process holds with writing()


def stage_beside(target: Path) -> Path:
    """A new hidden folder beside `target` to build it in, then rename into place:
    `.NAME.tmp-PID-XXXXXXXX`, named after this process. Leftovers of earlier runs that were
    killed before they could rename or remove theirs are removed first (leftovers)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    leftovers(target.parent, f".{target.name}.tmp-", held=is_held(target))
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=target.parent))


@contextmanager
def scratch(name: str) -> Iterator[Path]:
    """A folder in the temporary folder for work deleted when it is done
    (`shiftbench-NAME-PID-XXXXXXXX`); the scratch folders of killed runs (their process
    gone) are removed first, so a kill -9 does not leave one there for good."""
    base = Path(tempfile.gettempdir())
    leftovers(base, f"shiftbench-{name}-", held=False)
    folder = Path(tempfile.mkdtemp(prefix=f"shiftbench-{name}-{os.getpid()}-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def leftovers(folder: Path, prefix: str, *, held: bool) -> list[Path]:
    """Remove what killed runs left in `folder` under names starting with `prefix` (staging
    folders, temporary files); returns what was removed. A leftover whose name carries a
    process id (`PREFIX<pid>` or `PREFIX<pid>-...`) is removed once that process is gone;
    any other, made by an older shiftbench, only when the caller holds the target with
    writing(), so no other writer can be using it (`held`). A live writer's is left alone."""
    removed = []
    for entry in folder.glob(f"{glob.escape(prefix)}*"):
        rest = entry.name[len(prefix) :]
        owner = re.fullmatch(r"(\d+)(?:-[a-z0-9_]{8})?", rest)  # PID, or PID-<mkdtemp's 8>
        if owner is not None:
            if not held and _alive(int(owner[1])):
                continue
        elif not (held and re.fullmatch(r"[a-z0-9_]{8}", rest)):  # an older shiftbench's
            continue  # or another folder's name that happens to begin alike
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process with this id runs now (this one counts: its files are in use)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, as another user's
        return True
    return True


def is_held(path: Path) -> bool:
    """Whether this process holds the folder `path` with writing()."""
    return path.resolve() in _HELD


def atomic_write_text(path: Path, text: str) -> None:
    """Write `path` whole or not at all: the text goes to a hidden file beside it, is
    flushed to disk, and replaces `path` in one rename. A failure (a full disk) leaves
    `path` as it was and removes the partial file."""
    leftovers(path.parent, f".{path.name}.tmp-", held=False)  # of writes killed midway
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
