"""Waiting in tests: on an event, with a deadline, never on a bare sleep.

A test that sleeps and then asserts passes on an idle machine and fails on a busy one;
`wait_for` polls the condition itself, so a test waits exactly as long as it must, and
fails with a message naming what never happened.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL = 0.05  # seconds between two looks at the condition


def wait_for(condition: Callable[[], T], timeout: float, what: str, poll: float = POLL) -> T:
    """Call `condition` every `poll` seconds until it returns something truthy, and return
    that. After `timeout` seconds (and one last look), raise AssertionError naming `what`.

    An exception raised by `condition` propagates at once: a condition can fail early when
    it sees the awaited event can no longer happen (say, the process it watches exited).
    """
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(poll)
