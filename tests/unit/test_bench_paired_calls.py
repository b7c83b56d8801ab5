"""bench/paired.py's in-process pairing: calls alternate which goes first after an
uncounted warm-up of each, ratios pair A with B, and calls that disagree stop the bench."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

PAIRED = Path(__file__).resolve().parents[2] / "bench" / "paired.py"


@pytest.fixture(scope="module")
def paired():
    spec = importlib.util.spec_from_file_location("bench_paired_calls", PAIRED)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_paired_calls"] = module
    spec.loader.exec_module(module)
    return module


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
