"""Progress on stderr: the one place long work shows how far it has come.

Two shapes, both silenced by `quiet` (the commands' -q):

- `bar(total, label)`: a count of work items with rate and ETA. On a terminal it is a tqdm
  bar; otherwise (a CI log, a file) a few plain lines instead of carriage returns: the first
  once the work has run PLAIN_AFTER seconds (short work writes nothing), then one per tenth
  of the total or every PLAIN_EVERY seconds, and one at the end. The total is fixed when
  the bar is made and never grows: work done again (a retried call) is counted apart, as
  `retries: N` beside the count.
- `step(line)`: one line before a single long action that has no count of its own
  (loading a model, converting its weights), naming what it does and how long it should
  take, on a terminal or not.

Both write to sys.stderr, never stdout, so that a command's output stays what it was.
Library code calls these and nothing else for progress (core/messages.py).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

PLAIN_AFTER = 2.0  # seconds of work before a plain (not a terminal) progress line
PLAIN_EVERY = 30.0  # at most this many seconds between plain lines
PLAIN_STEP = 0.1  # and one line each time another tenth of the total is done

# Set by a stage function for the work it calls (a backend's model load knows no -q)
_QUIET: ContextVar[bool] = ContextVar("shiftbench_quiet", default=False)


@contextmanager
def quieted(quiet: bool) -> Iterator[None]:
    """Within it, every `step` and `bar` is silent when `quiet` is true."""
    token = _QUIET.set(quiet or _QUIET.get())
    try:
        yield
    finally:
        _QUIET.reset(token)


def on_terminal() -> bool:
    """Whether stderr is a terminal a bar can be drawn on: one that says how wide it is (a
    pseudo-terminal nobody sized reports 0 columns, and tqdm then draws nothing at all)."""
    try:
        return sys.stderr.isatty() and os.get_terminal_size(sys.stderr.fileno()).columns > 0
    except (AttributeError, ValueError, OSError):  # a closed or stand-in stream
        return False


def seconds(value: float) -> str:
    """A duration as a person says it: `about 40 s`, `about 3 min`."""
    if value < 90:
        return f"about {max(1, round(value))} s"
    return f"about {round(value / 60)} min"


def step(line: str, *, quiet: bool = False) -> None:
    """Say on stderr, before it starts, what a long action without a count of its own does
    and how long it should take (`loading X (about 1 s) ...`)."""
    if quiet or _QUIET.get():
        return
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


# Loading a model: torch and transformers imported (the first time in a process), then its
# weights read at this many bytes per second; measured on two idle cores (SmolLM2-135M's
# 538 MB in 4 s with the imports).
IMPORT_SECONDS = 3.0
LOAD_RATE = 300e6


def loading_line(name: str, folder: Path | None, imports: bool = False) -> str:
    """`loading NAME (about N s) ...` for a model read from `folder`, `imports` when torch
    and transformers are still to be imported; no estimate when the folder is unknown."""
    size = 0
    if folder is not None and folder.is_dir():
        size = sum(p.stat().st_size for p in folder.glob("*.safetensors")) or sum(
            p.stat().st_size for p in folder.glob("*.bin")
        )
    if not size:
        return f"loading {name} ..."
    return f"loading {name} ({seconds((IMPORT_SECONDS if imports else 0) + size / LOAD_RATE)}) ..."


# Counts this close in time to the first of their burst belong to it (a batch's texts are
# reported together, one by one). The rate is measured over whole bursts only: from the end
# of the first, whose items carry the warm-up (a model's first batch, a connection), to the
# end of the last one finished. Counts within BURST of the bar's start are work found done
# (cached), no measure of speed.
BURST = 0.5


def _honest_tqdm(tqdm: type) -> type:
    """tqdm whose rate and time left are the bar's own (`Bar.rate`), `?` while it has none:
    tqdm's own rate averages in the first batch's warm-up and promises minutes for seconds."""

    class Honest(tqdm):
        rate_of: Any = None  # the Bar's rate method

        @property
        def format_dict(self) -> dict[str, object]:
            shown = super().format_dict
            if self.rate_of is None:
                return shown
            if self.n >= self.total:  # done: None is tqdm's average over the whole work
                shown["rate"] = None
            else:
                shown["rate"] = self.rate_of() or 0.0  # 0: tqdm shows '?' for both
            return shown

    return Honest


class Bar:
    """A count of `total` work items on stderr (see the module docstring)."""

    def __init__(self, total: int, label: str, unit: str, quiet: bool) -> None:
        self.total = total
        self.label = label
        self.unit = unit
        self.n = 0
        self.retries = 0
        self.quiet = quiet or _QUIET.get() or total <= 0
        self._tqdm: Any = None
        self._start = time.monotonic()
        self._shown_at: float | None = None  # when the last plain line was written
        self._shown_n = 0
        # (time, count) at the end of the first burst and at the end of the last burst
        # finished: the rate is measured between them (see BURST)
        self._first: tuple[float, int] | None = None
        self._mark: tuple[float, int] | None = None
        self._burst_at = 0.0  # when the current burst began
        self._last_at = 0.0  # when the last count came
        if self.quiet:
            return
        if on_terminal():
            from tqdm.auto import tqdm

            self._tqdm = _honest_tqdm(tqdm)(
                total=total, desc=label, unit=unit, file=sys.stderr, dynamic_ncols=True
            )
            self._tqdm.rate_of = self.rate

    def update(self, n: int = 1) -> None:
        """`n` more items done (never past the total)."""
        n = max(0, min(n, self.total - self.n))
        self._count(n)
        if self.quiet:
            return
        if self._tqdm is not None:
            self._tqdm.update(n)
        else:
            self._plain(final=False)

    def _count(self, n: int) -> None:
        """Add `n` to the count and keep the ends of the bursts the rate is measured by."""
        if n <= 0:
            return
        now = time.monotonic()
        if now - self._start < BURST:  # found done at the start: no measure of speed
            pass
        elif self._first is None:
            self._first, self._burst_at = (now, self.n + n), now
        elif now - self._burst_at < BURST:  # the current burst goes on
            if self._mark is None:  # the first one
                self._first = (now, self.n + n)
        else:  # a new burst: the one before it is whole
            self._mark, self._burst_at = (self._last_at, self.n), now
        self._last_at = now
        self.n += n

    def rate(self) -> float | None:
        """Items a second between the end of the first burst and the end of the last one
        finished; None until a burst after the first is whole (no time left is shown then)."""
        if self._first is None or self._mark is None:
            return None
        (start, before), (end, done) = self._first, self._mark
        if end <= start or done <= before:
            return None
        return (done - before) / (end - start)

    def retried(self, n: int = 1) -> None:
        """`n` items done again (a retry): counted apart, the total stays."""
        if n <= 0:
            return
        self.retries += n
        if self.quiet:
            return
        if self._tqdm is not None:
            self._tqdm.set_postfix_str(f"retries: {self.retries}")
        else:  # retries after the last first attempt would otherwise go unseen
            self._plain(final=False)

    def close(self) -> None:
        if self.quiet:
            return
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None
        elif self._shown_at is not None or time.monotonic() - self._start >= PLAIN_AFTER:
            self._plain(final=True)
        self.quiet = True  # closed: nothing more is written

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _plain(self, final: bool) -> None:
        now = time.monotonic()
        elapsed = now - self._start
        if not final:
            if elapsed < PLAIN_AFTER:
                return
            due = self._shown_at is None or now - self._shown_at >= PLAIN_EVERY
            if not due and abs(self.n - self._shown_n) < PLAIN_STEP * self.total:
                return
        share = round(100 * self.n / self.total)
        parts = [f"{self.label}: {self.n}/{self.total} {self.unit}s ({share}%)"]
        if final:
            parts[0] += f" in {max(1, round(elapsed))} s"
        elif self.n >= self.total:
            if self.retries:  # every item has had its first try; failed ones are tried again
                parts.append("making again what failed")
        elif (rate := self.rate()) is not None:
            left = (self.total - self.n) / rate
            shown = f"{rate:.0f}" if rate >= 10 else f"{rate:.1f}"
            parts.append(f"{shown} {self.unit}s/s, {seconds(left)} left")
        if self.retries:
            parts.append(f"retries: {self.retries}")
        sys.stderr.write(", ".join(parts) + "\n")
        sys.stderr.flush()
        self._shown_at, self._shown_n = now, self.n


def bar(total: int, label: str, *, unit: str = "item", quiet: bool = False) -> Bar:
    """A progress count on stderr; use it as a context manager, so that it ends however the
    work does (an error's line then starts a line of its own)."""
    return Bar(total, label, unit, quiet)
