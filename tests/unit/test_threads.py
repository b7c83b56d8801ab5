"""The embedded engine's thread count: the cores other processes leave free.

CoreShare is fed scripted readings of /proc/stat (busy seconds of our cores) and of this
process's CPU time, so each case states exactly how busy the machine was.
"""

from __future__ import annotations

import pytest

from shiftbench.llm.backends import threads
from shiftbench.llm.backends.threads import CoreShare, Sample


@pytest.fixture(autouse=True)
def no_thread_count_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's workers get OMP_NUM_THREADS (conftest); these cases are of a user who
    set none, but the one that sets it."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)


class Machine:
    """A scripted machine: each `run(seconds, others, own)` adds that much busy time."""

    def __init__(self) -> None:
        self.wall = 100.0
        self.busy = 0.0
        self.own = 0.0
        self.waited: list[float] = []

    def read(self) -> Sample:
        return Sample(self.wall, self.busy, self.own)

    def run(self, seconds: float, others: float, own: float) -> None:
        """`seconds` of wall time in which other processes keep `others` cores busy and
        this process `own` cores."""
        self.wall += seconds
        self.busy += seconds * (others + own)
        self.own += seconds * own

    def wait(self, seconds: float) -> None:
        self.waited.append(seconds)
        self.run(seconds, self.others_while_waiting, 0.0)

    others_while_waiting = 0.0


def share(machine: Machine, cores: int = 2) -> CoreShare:
    return CoreShare(read=machine.read, cores=cores, fixed=None, wait=machine.wait)


def test_an_idle_machine_gets_every_core() -> None:
    machine = Machine()
    cores = share(machine)
    machine.run(3.0, others=0.05, own=1.0)  # model load: this process alone
    assert cores.threads() == 2
    machine.run(5.0, others=0.1, own=2.0)
    assert cores.threads() == 2


def test_a_core_another_process_keeps_busy_is_left_to_it_and_taken_back_after() -> None:
    machine = Machine()
    cores = share(machine)
    machine.run(3.0, others=1.0, own=1.0)
    assert cores.threads() == 1
    machine.run(5.0, others=1.0, own=1.0)  # it still runs: one thread stays
    assert cores.threads() == 1
    machine.run(5.0, others=0.0, own=1.0)  # it ended: both cores again
    assert cores.threads() == 2


def test_a_process_that_shares_a_core_with_our_second_thread_still_counts() -> None:
    # two threads beside one busy process on two cores: it gets about 2/3 of a core
    machine = Machine()
    cores = share(machine)
    machine.run(4.0, others=0.67, own=1.33)
    assert cores.threads() == 1


def test_a_light_intermittent_load_costs_no_thread() -> None:
    machine = Machine()
    cores = share(machine)
    machine.run(4.0, others=0.25, own=1.75)
    assert cores.threads() == 2


def test_a_machine_fully_taken_by_others_still_gets_one_thread() -> None:
    machine = Machine()
    cores = share(machine, cores=4)
    machine.run(4.0, others=6.0, own=1.0)
    assert cores.threads() == 1
    machine.run(4.0, others=1.0, own=3.0)
    assert cores.threads() == 3


def test_the_first_choice_counts_a_quarter_second_rather_than_guess() -> None:
    machine = Machine()
    machine.others_while_waiting = 1.0
    cores = share(machine)
    machine.run(0.05, others=1.0, own=0.0)
    assert cores.threads() == 1
    assert machine.waited == [pytest.approx(threads.MIN_INTERVAL - 0.05)]
    machine.run(0.01, others=0.0, own=1.0)  # too short to count again: the last choice holds
    assert cores.threads() == 1
    assert len(machine.waited) == 1


def test_a_thread_count_the_user_fixed_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    machine = Machine()
    cores = CoreShare(read=machine.read, cores=2, wait=machine.wait)
    machine.run(4.0, others=2.0, own=1.0)
    assert (cores.fixed, cores.threads()) == (3, 3)


def test_without_proc_stat_every_core_is_used() -> None:
    cores = CoreShare(read=lambda: None, cores=2, fixed=None)
    assert cores.threads() == 2


def test_the_readings_of_this_machine_are_sane() -> None:
    first = threads.read_sample()
    if first is None:
        pytest.skip("no /proc/stat here (not Linux)")
    second = threads.read_sample()
    assert second is not None
    assert second.wall >= first.wall and second.busy >= first.busy and second.own >= first.own
    assert threads.usable_cores() >= 1
