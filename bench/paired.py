"""Paired whole-process timing of two commands, A against B.

Each side runs as its own process (what a user pays: interpreter start, imports, model
load, the work). The runs are paired, and the side that goes first alternates (A,B then
B,A ...), so that neither side always meets a cold disk cache or a busier moment; one
uncounted warm-up run of each side comes first (bytecode compiled, files read once). What is
printed is the ratio A/B of each pair, as min / median / max, with the load average before
and after and the date: on a shared machine absolute seconds mean little, and one best-of
figure per side can hide anything.

Both sides must produce the same result: the caller gives a function that compares what
the two runs of a pair wrote (their stdout and their output folders) and returns a reason
when they differ.

`paired_calls` does the same for two calls in this process, where timing in-process
isolates a cause (the same work with and without one step, its inputs computed before):
the calls alternate and pair alike, and the caller compares what they returned.
"""

from __future__ import annotations

import datetime
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUT = "{out}"  # in an argv, stands for a fresh empty folder of that run


@dataclass(frozen=True)
class Run:
    """One finished run of a side: its time, what it printed and the folder it was given."""

    side: str
    seconds: float
    stdout: str
    out: Path
    result: Any = None  # what an in-process call returned (paired_calls)


@dataclass
class Report:
    """The paired runs of a comparison and what they add up to."""

    label: str
    pairs: list[tuple[Run, Run]] = field(default_factory=list)  # (A, B) whatever the order
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    date: str = ""

    @property
    def ratios(self) -> list[float]:
        return [a.seconds / b.seconds for a, b in self.pairs]

    def lines(self, goal: float | None = None) -> list[str]:
        """The report as printed: one line per pair, then the summary."""
        out = [f"{self.label}  ({self.date}, load average {_load(self.load_before)} before)"]
        for i, (a, b) in enumerate(self.pairs):
            first = "A" if i % 2 == 0 else "B"
            out.append(
                f"  pair {i + 1} ({first} first)  A {a.seconds:6.2f}s  B {b.seconds:6.2f}s  "
                f"A/B {a.seconds / b.seconds:.3f}"
            )
        lo, mid, hi = summary(self.ratios)
        met = ""
        if goal is not None:
            met = f"  goal <= {goal:.2f}: {'met' if mid <= goal else 'not met'} (median)"
        out.append(
            f"  A/B min / median / max  {lo:.3f} / {mid:.3f} / {hi:.3f}  ({len(self.pairs)} "
            f"pairs){met}"
        )
        out.append(f"  load average after {_load(self.load_after)}")
        return out


def summary(ratios: Sequence[float]) -> tuple[float, float, float]:
    """min, median and max of the paired ratios."""
    if not ratios:
        raise ValueError("no pairs were run")
    return min(ratios), statistics.median(ratios), max(ratios)


def throughput_lines(report: Report, floor: float) -> list[str]:
    """The report against a throughput goal of A at least `floor` times B's (A's time at
    most 1/floor of B's), then A's throughput relative to B's: min / median / max."""
    lo, mid, hi = summary([1 / r for r in report.ratios])
    met = "met" if mid >= floor else "not met"
    return [
        *report.lines(goal=1 / floor),
        f"  throughput A/B (B/A in time) min / median / max  {lo:.3f} / {mid:.3f} / {hi:.3f}  "
        f"goal >= {floor:.2f}: {met} (median)",
    ]


def shiftbench_env(shiftbench_path: str | None) -> dict[str, str] | None:
    """A side's environment with `shiftbench_path` first on PYTHONPATH (to time another
    copy of shiftbench); None when not given."""
    if not shiftbench_path:
        return None
    return {"PYTHONPATH": os.pathsep.join([shiftbench_path, os.environ.get("PYTHONPATH", "")])}


def order(pairs: int) -> list[tuple[str, str]]:
    """Which side runs first in each pair: A,B then B,A, alternating."""
    return [("A", "B") if i % 2 == 0 else ("B", "A") for i in range(pairs)]


def run_process(argv: Sequence[str], out: Path, env: dict[str, str] | None = None) -> Run:
    """Run one command to its end (`{out}` in argv becomes `out`) and time it whole."""
    args = [str(a).replace(OUT, str(out)) for a in argv]
    start = time.perf_counter()
    done = subprocess.run(
        args, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} exited with {done.returncode}:\n{done.stderr[-2000:]}"
        )
    return Run("", seconds, done.stdout, out)


def paired(
    label: str,
    a: Sequence[str],
    b: Sequence[str],
    pairs: int,
    same: Callable[[Run, Run], str | None],
    *,
    env_a: dict[str, str] | None = None,
    env_b: dict[str, str] | None = None,
    runner: Callable[[Sequence[str], Path, dict[str, str] | None], Run] = run_process,
    scratch: Path | None = None,
    warmup: int = 1,
) -> Report:
    """Run `a` and `b` `pairs` times each, alternating which goes first, and pair the runs.

    Args:
        label: names the comparison in the report.
        a, b: the two commands (argv lists; `{out}` is replaced by a fresh folder per run).
        pairs: how many (A, B) pairs to run.
        same: compares a pair's two runs; returns None when they agree, else why not
            (raised as an error: a ratio of two different results means nothing).
        env_a, env_b: environment variables added for each side.
        runner: runs one command (tests pass a stand-in).
        scratch: where the per-run folders go (a temporary folder by default).
        warmup: runs of each side (A, then B) before the pairs, not counted: the first run
            after a change pays for compiling bytecode and filling the disk cache.
    """
    report = Report(label, load_before=os.getloadavg(), date=_now())
    sides = {"A": (a, env_a), "B": (b, env_b)}
    with tempfile.TemporaryDirectory(dir=scratch) as root:
        for i in range(warmup):
            for side in ("A", "B"):
                argv, env = sides[side]
                out = Path(root) / f"warmup{i}{side}"
                out.mkdir()
                runner(argv, out, env)
                shutil.rmtree(out, ignore_errors=True)
        report.load_before = os.getloadavg()  # the load the pairs start under
        for i, first_second in enumerate(order(pairs)):
            runs: dict[str, Run] = {}
            for side in first_second:
                argv, env = sides[side]
                out = Path(root) / f"{i}{side}"
                out.mkdir()
                run = runner(argv, out, env)
                runs[side] = Run(side, run.seconds, run.stdout, out)
            why = same(runs["A"], runs["B"])
            if why is not None:
                raise RuntimeError(f"{label}, pair {i + 1}: the two sides differ: {why}")
            report.pairs.append((runs["A"], runs["B"]))
            for run in runs.values():  # keep the disk as it was for the next pair
                shutil.rmtree(run.out, ignore_errors=True)
    report.load_after = os.getloadavg()
    return report


def paired_calls(
    label: str,
    a: Callable[[], Any],
    b: Callable[[], Any],
    pairs: int,
    same: Callable[[Any, Any], str | None],
    *,
    warmup: int = 1,
    clock: Callable[[], float] = time.perf_counter,
) -> Report:
    """Call `a` and `b` in this process `pairs` times each, alternating which goes first.

    The in-process twin of `paired`: one uncounted warm-up call of each (A, then B), then
    pairs A,B / B,A ...; `same` compares the two calls' returned values (None when they
    agree, else why not, raised as an error). Each Run's `result` holds what its call
    returned; `out` is unused.

    Args:
        label: names the comparison in the report.
        a, b: the two calls, each doing the whole work being timed.
        pairs: how many (A, B) pairs to run.
        same: compares a pair's two returned values.
        warmup: calls of each side before the pairs, not counted.
        clock: the timer (tests pass a stand-in).
    """
    report = Report(label, load_before=os.getloadavg(), date=_now())
    sides = {"A": a, "B": b}
    for _ in range(warmup):
        a()
        b()
    report.load_before = os.getloadavg()
    for i, first_second in enumerate(order(pairs)):
        runs: dict[str, Run] = {}
        for side in first_second:
            start = clock()
            result = sides[side]()
            runs[side] = Run(side, clock() - start, "", Path(), result)
        why = same(runs["A"].result, runs["B"].result)
        if why is not None:
            raise RuntimeError(f"{label}, pair {i + 1}: the two sides differ: {why}")
        report.pairs.append((runs["A"], runs["B"]))
    report.load_after = os.getloadavg()
    return report


def _load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.2f}" for x in load)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
