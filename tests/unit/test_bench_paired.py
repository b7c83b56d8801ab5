"""bench/paired.py: the sides alternate which goes first, runs are paired A with B, and the
ratios are A/B of each pair; a pair whose sides disagree stops the bench. The same for its
in-process pairing of calls, after an uncounted warm-up of each."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

PAIRED = Path(__file__).resolve().parents[2] / "bench" / "paired.py"


@pytest.fixture(scope="module")
def paired():
    spec = importlib.util.spec_from_file_location("bench_paired", PAIRED)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_paired"] = module
    spec.loader.exec_module(module)
    return module


def scripted(paired, seconds):
    """A stand-in runner: the side is argv[0]; each call takes its side's next time."""
    calls = []
    left = {side: list(times) for side, times in seconds.items()}

    def run(argv, out, env):
        side = argv[0]
        calls.append((side, dict(env or {}), out.is_dir() and not any(out.iterdir())))
        (out / "result.txt").write_text(side, encoding="utf-8")
        return paired.Run("", left[side].pop(0), f"{side} said hello\n", out)

    return run, calls


def test_order_alternates_and_ratios_pair_a_with_b(paired):
    times = {"a": [9.0, 2.0, 3.0, 1.0, 4.0], "b": [9.0, 1.0, 2.0, 2.0, 4.0]}  # warm-up first
    run, calls = scripted(paired, times)
    report = paired.paired(
        "demo", ["a"], ["b"], 4, lambda x, y: None, env_a={"WHO": "a"}, runner=run
    )
    assert [side for side, _, _ in calls] == ["a", "b", "a", "b", "b", "a", "a", "b", "b", "a"]
    assert all(fresh for _, _, fresh in calls)  # every run gets an empty folder of its own
    assert [env for side, env, _ in calls if side == "a"] == [{"WHO": "a"}] * 5
    assert [env for side, env, _ in calls if side == "b"] == [{}] * 5
    assert report.ratios == [2.0, 1.5, 0.5, 1.0]
    assert paired.summary(report.ratios) == (0.5, 1.25, 2.0)
    lines = report.lines(goal=0.9)
    assert lines[1] == "  pair 1 (A first)  A   2.00s  B   1.00s  A/B 2.000"
    assert lines[2] == "  pair 2 (B first)  A   3.00s  B   2.00s  A/B 1.500"
    assert lines[5] == (
        "  A/B min / median / max  0.500 / 1.250 / 2.000  (4 pairs)  goal <= 0.90: not met (median)"
    )
    assert lines[0].startswith("demo  (") and "load average" in lines[0]
    assert lines[6].startswith("  load average after ")


def test_sides_that_differ_stop_the_bench(paired):
    run, _ = scripted(paired, {"a": [1.0], "b": [1.0]})

    def same(a, b):
        mine = (a.out / "result.txt").read_text(encoding="utf-8")
        theirs = (b.out / "result.txt").read_text(encoding="utf-8")
        return None if mine == theirs else f"{mine} != {theirs}"

    with pytest.raises(RuntimeError, match="demo, pair 1: the two sides differ: a != b"):
        paired.paired("demo", ["a"], ["b"], 1, same, runner=run, warmup=0)


def test_a_whole_process_gets_its_folder(paired, tmp_path):
    code = "import sys, pathlib; pathlib.Path(sys.argv[1], 'x').write_text('1'); print('ok')"
    run = paired.run_process([sys.executable, "-c", code, "{out}"], tmp_path)
    assert (tmp_path / "x").read_text() == "1" and run.stdout == "ok\n" and run.seconds > 0


class Clock:
    """A stand-in timer: each call takes the time its side was given, in turn."""

    def __init__(self, seconds):
        self.now = 0.0
        self.left = {side: list(times) for side, times in seconds.items()}
        self.calls = []

    def side(self, name, value):
        def call():
            self.calls.append(name)
            self.now += self.left[name].pop(0)
            return value

        return call

    def __call__(self):
        return self.now


def test_calls_alternate_after_a_warm_up_and_pair_a_with_b(paired):
    clock = Clock({"a": [9.0, 2.0, 3.0, 1.0], "b": [9.0, 1.0, 2.0, 2.0]})  # warm-up first
    report = paired.paired_calls(
        "demo", clock.side("a", 7), clock.side("b", 7), 3, lambda x, y: None, clock=clock
    )
    assert clock.calls == ["a", "b", "a", "b", "b", "a", "a", "b"]
    assert report.ratios == [2.0, 1.5, 0.5]
    assert [a.result for a, _ in report.pairs] == [7, 7, 7]
    lines = report.lines(goal=2.0)
    assert lines[2] == "  pair 2 (B first)  A   3.00s  B   2.00s  A/B 1.500"
    assert lines[4] == (
        "  A/B min / median / max  0.500 / 1.500 / 2.000  (3 pairs)  goal <= 2.00: met (median)"
    )


def test_calls_that_return_different_values_stop_the_bench(paired):
    clock = Clock({"a": [1.0], "b": [1.0]})

    def same(x, y):
        return None if x == y else f"{x} != {y}"

    with pytest.raises(RuntimeError, match="demo, pair 1: the two sides differ: 1 != 2"):
        paired.paired_calls(
            "demo", clock.side("a", 1), clock.side("b", 2), 1, same, warmup=0, clock=clock
        )
