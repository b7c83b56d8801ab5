"""Tables as every report prints them: aligned plain text for the terminal, Markdown for
the report files."""

from __future__ import annotations


def plain_table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    """Columns padded to their widest cell, the header over a dashed rule: the first `left`
    columns left-aligned, the rest right-aligned, trailing spaces trimmed."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *map(fmt, rows)])


def markdown_table(
    header: list[str],
    rows: list[list[str]],
    left: int = 1,
    *,
    align: str | None = None,
    tight_rule: bool = False,
) -> str:
    """A Markdown table whose first `left` columns are text, the rest right-aligned; or
    aligned column by column by `align`, one letter per column (`l` text, `r` numbers).
    The rule under the header is `| --- | ---: |`, or `|---|---:|` with `tight_rule` (the
    run folder's, batch folders' and cards' reports write it so). A `|` in a cell is
    escaped."""
    letters = align or "l" * left + "r" * (len(header) - left)
    if len(letters) != len(header):
        raise ValueError(f"align {letters!r} does not give one letter per column of {header}")
    marks = ["---" if a == "l" else "---:" for a in letters]
    cells = [[cell.replace("|", "\\|") for cell in r] for r in [header, *rows]]
    lines = ["| " + " | ".join(r) + " |" for r in cells]
    rule = "|" + "|".join(marks) + "|" if tight_rule else "| " + " | ".join(marks) + " |"
    return "\n".join([lines[0], rule, *lines[1:]])
