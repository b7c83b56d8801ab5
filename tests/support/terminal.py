"""A command whose stderr is a terminal: a pseudo-terminal read as the process writes it.

Progress shows only where a person watches: shiftbench draws bars when stderr is a
terminal. `OnTerminal` starts the command with stderr on a pty (stdout stays a pipe, as a
shell's `> file` would make it) and collects what it writes there as it comes, so a test
can wait for a line and see whether the command was still working when it came.
"""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Sequence
from pathlib import Path

from support.waiting import wait_for

DEADLINE = 600  # seconds: a busy two-core machine loads a model slowly


class OnTerminal:
    """`python -c script args...` (default: the shiftbench command line) with stderr on a
    pseudo-terminal."""

    def __init__(self, args: Sequence[object], *, script: str | None = None,
                 cwd: Path | None = None, sized: bool = True) -> None:  # fmt: skip
        command = [sys.executable, "-m", "shiftbench"]
        if script is not None:
            command = [sys.executable, "-c", script]
        master, slave = os.openpty()
        # a window's size, as a terminal has one (a new pty's is 0 x 0: bars draw nothing)
        # (`sized=False`: left so, as some terminal emulators and wrappers leave it)
        env = dict(os.environ)
        if sized:
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            env.update(COLUMNS="120", LINES="40")
        self.process = subprocess.Popen(
            [*command, *map(str, args)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=slave, env=env, cwd=cwd,
        )  # fmt: skip
        os.close(slave)
        self._master = master
        self._lock = threading.Lock()
        self._chunks: list[tuple[str, bool]] = []  # (text, the process still ran after it)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._master, 4096)
            except OSError:  # the process closed its side (EIO on Linux)
                break
            if not data:
                break
            running = self.process.poll() is None
            with self._lock:
                self._chunks.append((data.decode("utf-8", "replace"), running))
        os.close(self._master)

    @property
    def stderr(self) -> str:
        with self._lock:
            return "".join(text for text, _ in self._chunks)

    def seen_while_running(self, text: str) -> bool:
        """Whether `text` had been written by the time of a read made while the process
        still ran; raises once the process has ended without it."""
        with self._lock:
            shown = ""
            for chunk, running in self._chunks:
                shown += chunk
                if text in shown:
                    return running
        if self.process.poll() is not None and not self._reader.is_alive():
            raise AssertionError(f"the command ended without showing {text!r}:\n{self.stderr}")
        return False

    def wait_while_running(self, text: str) -> None:
        """Wait (with a deadline) until the command shows `text` while it still runs."""
        wait_for(lambda: self.seen_while_running(text), DEADLINE, f"{text!r} on the terminal")

    def finish(self) -> tuple[int, str, str]:
        """Wait for the end: (exit code, stdout, everything written to the terminal)."""
        stdout, _ = self.process.communicate(timeout=DEADLINE)
        self._reader.join(timeout=DEADLINE)
        return self.process.returncode, stdout.decode("utf-8"), self.stderr
