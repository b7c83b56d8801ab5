"""How many compute threads an in-process engine uses: the cores other processes leave free.

An engine's threads (torch's, llama.cpp's) split each step of generation into equal parts
and wait for one another at its end. When another process holds one of the cores, the
thread that runs there gets a fraction of it and every step waits for that thread: on a
2-core machine with one other busy process, the embedded backend with 2 threads took 3.3x
its idle time, with 1 thread 1.4x. So before each batch the engine asks `CoreShare.threads()`,
which counts the cores that other processes kept busy since it last counted (the busy time
of this process's cores in /proc/stat, less this process's own CPU time) and returns the
rest, at least one.

A thread count the user set (OMP_NUM_THREADS) is kept as it is, and where /proc/stat cannot
be read (not Linux) every usable core is used, as before.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

MIN_INTERVAL = 0.25  # seconds of counting a decision needs; shorter keeps the last one
# A core counts as free once other processes use less than this share of it: a light,
# intermittent load (an editor, a shell) does not cost a thread.
SPARE = 0.3


@dataclass(frozen=True)
class Sample:
    """What one reading gives: wall time, busy time of our cores, our own CPU time (s)."""

    wall: float
    busy: float
    own: float


def usable_cores() -> int:
    """The cores this process may run on: its affinity, cut to a cgroup's CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        cores = min(cores, max(1, int(quota)))
    return max(1, cores)


def _cgroup_quota() -> float | None:
    """cgroup v2's cpu.max as a number of cores, or None when there is no limit."""
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as f:
            limit, period = f.read().split()[:2]
        return None if limit == "max" else int(limit) / int(period)
    except (OSError, ValueError):
        return None


def read_sample() -> Sample | None:
    """Busy seconds of the cores this process may use, from /proc/stat; None off Linux, and
    None under a cgroup CPU quota smaller than those cores (its share of them is not what
    /proc/stat counts)."""
    try:
        mine = os.sched_getaffinity(0)
        quota = _cgroup_quota()
        if quota is not None and quota < len(mine):
            return None
        with open("/proc/stat", encoding="ascii") as f:
            lines = f.read().splitlines()
        tick = os.sysconf("SC_CLK_TCK")
    except (AttributeError, OSError, ValueError):
        return None
    busy = 0
    found = False
    for line in lines:
        name, _, rest = line.partition(" ")
        if not (name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in mine):
            continue
        # user nice system idle iowait irq softirq steal (guest time is inside user)
        fields = [int(v) for v in rest.split()[:8]]
        if len(fields) < 8:
            return None
        busy += sum(fields) - fields[3] - fields[4]
        found = True
    if not found:
        return None
    return Sample(time.monotonic(), busy / tick, time.process_time())


class CoreShare:
    """Chooses the thread count before each batch from what others used since the last.

    `read` and `cores` are the machine's readings (tests give their own).
    """

    def __init__(
        self,
        read: Callable[[], Sample | None] = read_sample,
        cores: int | None = None,
        fixed: int | None = None,
        wait: Callable[[float], None] = time.sleep,
    ) -> None:
        self.cores = cores if cores is not None else usable_cores()
        if fixed is None:
            fixed = threads_from_env()
        self.fixed = fixed
        self._read = read
        self._wait = wait
        self._last = read() if fixed is None else None
        self._threads = fixed or self.cores

    def threads(self) -> int:
        """The thread count for the next batch."""
        if self.fixed is not None or self._last is None:
            return self._threads
        now = self._read()
        if now is None:
            return self._threads
        interval = now.wall - self._last.wall
        if interval < MIN_INTERVAL:
            if self._decided:
                return self._threads
            # the first decision: count for a quarter second rather than guess
            self._wait(MIN_INTERVAL - interval)
            now = self._read() or now
            interval = now.wall - self._last.wall
        others = (now.busy - self._last.busy) - (now.own - self._last.own)
        self._last = now
        self._decided = True
        busy_cores = max(0.0, others / interval) if interval > 0 else 0.0
        chosen = max(1, min(self.cores, int(self.cores - busy_cores + SPARE)))
        if chosen != self._threads:
            log.debug(
                "compute threads %d -> %d: other processes kept %.2f of %d cores busy",
                self._threads, chosen, busy_cores, self.cores,
            )  # fmt: skip
        self._threads = chosen
        return chosen

    _decided = False


def threads_from_env() -> int | None:
    """The thread count the user fixed with OMP_NUM_THREADS, if a positive integer."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None
