"""The rows the --rewrite tests fail on purpose, and how many rows they take."""

from __future__ import annotations

LIMIT = 30
FAILED_QUERY = 3  # the scripted backend answers these rows' texts with nothing
FAILED_DOCUMENT = 2
