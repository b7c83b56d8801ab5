"""Small file systems mounted for a test, and processes that hold a folder's writer lock."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A small file system mounted at `where` (tmpfs `options`: `ro,size=64k`) for the
    test's length; the test is skipped, with the reason, where this process may not mount
    one (as root, chmod stops nothing, so a read-only disk needs a mount)."""
    where.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command here")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def folder_holder(out: Path, marker: Path) -> subprocess.Popen:
    """A process that holds `out` as its one writer (writes.writing) from the moment it
    writes `marker` until its stdin closes or it is killed."""
    return subprocess.Popen(
        [sys.executable, "-c",
         "import sys, pathlib\n"
         "from shiftbench.core.data.writes import writing\n"
         f"with writing(pathlib.Path({str(out)!r})):\n"
         f"    pathlib.Path({str(marker)!r}).write_text('held')\n"
         "    sys.stdin.read()\n"],
        stdin=subprocess.PIPE,
    )  # fmt: skip
