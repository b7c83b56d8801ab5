"""report.html: the whole report as one self-contained page that opens offline.

It renders the blocks report.md is made of (`report_blocks`), so the two hold the same
headings, sentences, tables and notes; the plots are embedded as data URIs, the style is
inline, and the page has no script and loads nothing, so it shows the same from file://
with no network. Every text from the inputs (a model's or a dataset's name) is escaped
and shows as text.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from typing import Any

from shiftbench.evaluate.report.tables import Block

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px}
table{border-collapse:collapse;margin:8px 0}
th,td{padding:3px 10px;text-align:right;border-bottom:1px solid #d8dee4;white-space:nowrap}
th{background:#f3f5f7}th.text,td.text{text-align:left}
.scroll{overflow-x:auto}.note{color:#57606a}
p{max-width:75em}img{max-width:100%;height:auto;display:block;margin:8px 0}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int) -> str:
    def cells(tag: str, row: Sequence[str]) -> str:
        return "".join(
            f'<{tag} class="text">{_e(c)}</{tag}>' if i < left else f"<{tag}>{_e(c)}</{tag}>"
            for i, c in enumerate(row)
        )

    body = "".join(f"<tr>{cells('td', row)}</tr>" for row in rows)
    return (
        f'<div class="scroll"><table><thead><tr>{cells("th", header)}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def html_report(blocks: Sequence[Block], plots: Mapping[str, bytes]) -> str:
    """The page of the report's `blocks`, each plot a PNG data URI from `plots` (file name
    to bytes); equal inputs give equal bytes."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>shiftbench robustness report</title>",
        f"<style>{STYLE}</style></head><body>",
    ]
    for kind, *content in blocks:
        if kind in ("h1", "h2"):
            parts.append(f"<{kind}>{_e(content[0])}</{kind}>")
        elif kind == "table":
            parts.append(_table(*content))
        elif kind == "plot":
            name = content[0]
            data = base64.b64encode(plots[name]).decode("ascii")
            alt = _e(name.removesuffix(".png"))
            parts.append(
                f'<img alt="{alt}" data-plot="{_e(name)}" src="data:image/png;base64,{data}">'
            )
        else:
            note = content[0].startswith("* ")  # what a `*` after an interval means
            attribute = ' class="note"' if note else ""
            parts.append(f"<p{attribute}>{_e(content[0])}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
