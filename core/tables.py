"""Tables as every report prints them: aligned plain text for the terminal, Markdown for
the report files; and text from files escaped for where it lands (a Markdown cell or
line, a CSV cell a spreadsheet opens)."""

from __future__ import annotations

import re

# A character that ends a line or is not text: in a cell or a list item it would end the
# table row or the item
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_ENTITY = re.compile(r"&(?=#?\w+;)")  # an & that would read as the start of an HTML entity
_MARKUP = re.compile(r"([\\`*_\[\]|~])")  # what opens code, emphasis, a link, a cell


def markdown_cell(text: str) -> str:
    """`text` as one cell of a Markdown table: on one line, its `|` escaped, and its HTML
    (`<`, `>`, an entity's `&`) shown as written. Backticks are kept: a cell may be code."""
    text = _BREAKS.sub(" ", text).replace("|", "\\|")
    return _ENTITY.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")


def markdown_text(text: str) -> str:
    """`text` from a file (a rater id, a name) shown literally in a Markdown line or list
    item: on one line, with nothing it holds read as Markdown or HTML."""
    text = _MARKUP.sub(r"\\\1", _BREAKS.sub(" ", text))
    text = _ENTITY.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")
    # what would open a block at the start of a line: a heading, a list item, a rule
    text = re.sub(r"^(\s*)([#+=-])", r"\1\\\2", text)
    return re.sub(r"^(\s*\d+)([.)])", r"\1\\\2", text)


# What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: str) -> str:
    """`value` as a CSV cell that a spreadsheet shows and never runs: a value that begins
    like a formula gets a leading `'` (OWASP's advice), and so does one that begins with
    quotes before such a character, so from_spreadsheet_cell gives back every value."""
    if value.lstrip("'").startswith(FORMULA_START):
        return "'" + value
    return value


def from_spreadsheet_cell(cell: str) -> str:
    """The value spreadsheet_cell wrote as `cell`."""
    if cell.startswith("'") and cell.lstrip("'").startswith(FORMULA_START):
        return cell[1:]
    return cell


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
    run folder's, batch folders' and cards' reports write it so). Each cell is escaped
    (markdown_cell): a name read from a file cannot end its row or add markup."""
    letters = align or "l" * left + "r" * (len(header) - left)
    if len(letters) != len(header):
        raise ValueError(f"align {letters!r} does not give one letter per column of {header}")
    marks = ["---" if a == "l" else "---:" for a in letters]
    cells = [[markdown_cell(cell) for cell in r] for r in [header, *rows]]
    lines = ["| " + " | ".join(r) + " |" for r in cells]
    rule = "|" + "|".join(marks) + "|" if tight_rule else "| " + " | ".join(marks) + " |"
    return "\n".join([lines[0], rule, *lines[1:]])
