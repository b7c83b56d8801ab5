"""How a delta's interval is flagged when it is weak evidence, the same way in every output
(evaluate's table, report.md, the leaderboard, the card, the plots): a `*` after the
interval, and under the table the notes saying what it means."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# An interval is flagged ("thin") when it rests on fewer items than this: a percentile
# bootstrap interval is too narrow on few items, and covers less than its level.
MIN_ITEMS = 30
# ... or when fewer than this share of its draws are defined (a draw holding too few
# distinct items to score is left out, and the interval rests on the rest).
MIN_USABLE_SHARE = 0.95
MARK = "*"
THIN_NOTE = (
    f"* an interval from fewer than {MIN_ITEMS} items, or with fewer than "
    f"{MIN_USABLE_SHARE:.0%} of its bootstrap draws defined: it may cover less than 95%"
)
ZERO_WIDTH_NOTE = (
    "* an interval of zero width at the decimals shown: its bootstrap draws all gave about "
    "the same delta, too little variation to measure; it does not mean the delta is certain"
)
FEW_ITEMS = "few items"
FEW_DRAWS = "few usable draws"
ZERO_WIDTH = "zero width"
# a flagged interval as the tables print it: `[lo, hi]*`
_FLAGGED = re.compile(r"\[([-+]?[0-9.]+), ([-+]?[0-9.]+)\]\*")


def thin(items: int | None, usable: int | None, resamples: int | None) -> str | None:
    """Why an interval may cover less than its level ("few items", "few usable draws"),
    or None when it rests on enough of both (or no figure says otherwise)."""
    if items is not None and items < MIN_ITEMS:
        return FEW_ITEMS
    if usable is not None and resamples and usable < MIN_USABLE_SHARE * resamples:
        return FEW_DRAWS
    return None


def width_places(ci: Sequence[float] | None, most: int, factor: float = 1.0) -> int:
    """The decimals to print a delta and its interval `ci` with: enough to show the
    interval's width (times `factor`) to two significant digits, at least one and at most
    `most`; `most` without an interval, or for one of no width (which then shows as such).
    Digits finer than the interval's own width are noise, and a reader takes them for
    precision."""
    if not ci:
        return most
    width = abs(float(ci[1]) - float(ci[0])) * factor
    if not (width > 0 and math.isfinite(width)):
        return most
    return max(1, min(most, 1 - math.floor(math.log10(width))))


def zero_width(low: str, high: str) -> bool:
    """Whether an interval printed as `low` and `high` shows no width (`+0.00`, `-0.00`)."""
    return float(low) == float(high)


def weak(figure: Mapping[str, Any], low: str, high: str) -> list[str]:
    """Why a figure's interval (printed as `low`, `high`) is flagged: thin (few items, in
    `items` or `rows`, or few usable draws), zero width; empty when it is not."""
    items = figure.get("items", figure.get("rows"))
    reasons = [r] if (r := thin(items, figure.get("usable_draws"), figure.get("resamples"))) else []
    return reasons + ([ZERO_WIDTH] if zero_width(low, high) else [])


def notes(reasons: Iterable[str]) -> list[str]:
    """The notes under a table whose flagged intervals have these reasons: THIN_NOTE for
    any (it lists what flags an interval), ZERO_WIDTH_NOTE too where one shows no width."""
    seen = set(reasons)
    return ([THIN_NOTE] if seen else []) + ([ZERO_WIDTH_NOTE] if ZERO_WIDTH in seen else [])


def flagged_notes(texts: Iterable[str]) -> list[str]:
    """The notes for the flagged intervals (`[lo, hi]*`) printed in `texts`."""
    reasons = set()
    for text in texts:
        for low, high in _FLAGGED.findall(text):
            reasons.add(ZERO_WIDTH if zero_width(low, high) else FEW_ITEMS)
    return notes(reasons)
