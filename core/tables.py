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


def markdown_table(header: list[str], rows: list[list[str]], left: int = 1) -> str:
    """A Markdown table whose first `left` columns are text, the rest right-aligned."""
    align = ["---"] * left + ["---:"] * (len(header) - left)
    lines = [header, align, *rows]
    return "\n".join(
        "| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |" for r in lines
    )
