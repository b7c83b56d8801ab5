"""How library code speaks: through `logging`, one logger per module under "shiftbench".

Three kinds of message, by level:

- REPORT (between INFO and WARNING): a line of a command's own output that appears while
  it works, such as `run`'s stage lines, publish's plan and result, or validate's table
  rows as each config finishes. The command line prints these on stdout;
- INFO and DEBUG: what each step does, printed on stderr with `-v` and `-vv`;
- WARNING and above: printed on stderr always.

Library code never prints and takes no printing callbacks. The command line installs the
one handler that decides where each record goes (`shiftbench.cli`); a Python caller sees
the REPORT lines by giving the "shiftbench" logger a handler at that level. Progress bars
are tqdm's, on stderr.
"""

from __future__ import annotations

import logging

REPORT = 25
logging.addLevelName(REPORT, "REPORT")


def report(log: logging.Logger, line: str) -> None:
    """One line of the running command's own output."""
    log.log(REPORT, line)


def counted(n: int, noun: str, plural: str = "") -> str:
    """`n` with its noun in the number it takes: `1 problem`, `0 problems`, `2 problems`;
    `plural` where adding an s is wrong (`counted(n, "batch", "batches")`)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
