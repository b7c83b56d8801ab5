"""A command whose --help shows its options in named sections instead of one long list.

A command declares its sections once, beside its options: each section's title and the
names of its parameters, in the order help shows them. The options every command has
(-q, -v, -h) close the help under "General options"; an option no section names is shown
under "Other options", never left out (tests/integration/test_help_layout.py fails on it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click
from click.formatting import term_len

GENERAL = ("quiet", "verbose", "help")  # every command's own, shown last
COLUMN = 30  # click's widest first column: a longer option starts its help on a new line


class SectionedCommand(click.Command):
    """A click command whose options are listed by section in --help.

    Args:
        sections: Section title -> the names of its parameters, in the order help lists
            them (the titles in the order the sections come).
    """

    def __init__(self, *args: Any, sections: Mapping[str, Sequence[str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sections = {title: tuple(names) for title, names in sections.items()}

    def option_sections(self, ctx: click.Context) -> list[tuple[str, list[tuple[str, str]]]]:
        """Each heading of the help with its (option, help) rows, empty sections left out."""
        records: dict[str, tuple[str, str]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and isinstance(param, click.Option):
                # the help option's own name differs between click's versions
                name = "help" if param is self.get_help_option(ctx) else param.name
                records[name or ""] = record
        shown = [
            (f"{title} options", [records.pop(n) for n in names if n in records])
            for title, names in self.sections.items()
        ]
        general = [records.pop(n) for n in GENERAL if n in records]
        shown += [("Other options", list(records.values())), ("General options", general)]
        return [(heading, rows) for heading, rows in shown if rows]

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        shown = self.option_sections(ctx)
        if not shown:
            return
        # one column for every section, as one list would have: a section's first row is
        # padded to the widest option of them all (click sizes each list by its own rows)
        width = min(max(term_len(term) for _, rows in shown for term, _ in rows), COLUMN)
        for heading, rows in shown:
            first, text = rows[0]
            with formatter.section(heading):
                formatter.write_dl([(first.ljust(width), text), *rows[1:]], col_max=COLUMN)
