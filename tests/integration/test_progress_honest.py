"""Progress that promises only what it knows: gen's texts come back a batch at a time, the
first batch carrying the model's warm-up, so no time left is shown until a batch after the
first is whole, as plain lines and on a terminal's bar alike."""

from __future__ import annotations

import pytest

from shiftbench.core import progress
from shiftbench.core.progress import bar


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    """The progress module's clock, moved by hand (no test waits on real time)."""
    now = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def batches(counted: progress.Bar, clock: list[float], at: list[float], size: int) -> None:
    """A batch of `size` texts finishing at each time of `at`, its texts counted one by one
    in the same instant, as gen's engine hands them back."""
    for moment in at:
        clock[0] = moment
        for _ in range(size):
            counted.update(1)


def test_plain_lines_show_no_time_left_until_a_second_batch_is_whole(monkeypatch, clock, capsys):
    """The first batch of 8 took 60 s (the warm-up), each next one 8 s: 1 text a second.
    While the second batch's texts come in, its first text does not stand for its 8 s
    (that once printed '9/32 texts (28%), 0.1 texts/s, about 3 min left'); the first time
    left, once that batch is whole, is measured from its texts alone."""
    monkeypatch.setattr(progress, "on_terminal", lambda: False)
    monkeypatch.setattr(progress, "PLAIN_AFTER", 0.0)
    monkeypatch.setattr(progress, "PLAIN_EVERY", 0.0)
    counted = bar(32, "paraphrase-s1337", unit="text")
    batches(counted, clock, [60.0, 68.0, 76.0], size=8)
    counted.close()
    lines = capsys.readouterr().err.splitlines()
    timed = [line for line in lines if " left" in line]
    assert lines[: lines.index(timed[0])] == [
        f"paraphrase-s1337: {n}/32 texts ({round(100 * n / 32)}%)" for n in range(1, 17)
    ]
    assert timed[0] == (
        f"paraphrase-s1337: 17/32 texts (53%), 1.0 texts/s, {progress.seconds(15)} left"
    )
    assert timed[-1] == (
        f"paraphrase-s1337: 24/32 texts (75%), 1.0 texts/s, {progress.seconds(8)} left"
    )


def test_a_terminals_bar_shows_no_time_left_before_it_knows_one(monkeypatch, clock):
    """On a terminal tqdm's own rate counts the warm-up (`1/32 [00:05<02:51, 5.53s/text]`
    for 40 s of work): the bar shows `?` for the rate and the time left until a second
    batch is whole, then the rate measured after the first batch; at the end, tqdm's
    average over the whole work."""
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    counted = bar(32, "paraphrase-s1337", unit="text")
    batches(counted, clock, [60.0], size=8)
    assert "<?, ?text/s]" in str(counted._tqdm)
    batches(counted, clock, [68.0], size=1)  # the second batch's first text
    assert "<?, ?text/s]" in str(counted._tqdm)
    batches(counted, clock, [68.0], size=7)
    batches(counted, clock, [76.0], size=8)  # the second batch now whole: 8 texts in 8 s
    assert str(counted._tqdm).endswith("24/32 [00:00<00:08,  1.00text/s]")
    batches(counted, clock, [84.0], size=8)  # done: the rate is the whole work's average
    assert "32/32 [00:00<00:00, " in str(counted._tqdm)
    counted.close()
