"""JSON and JSON Lines files read as untrusted input: every fault is one InputError
naming the file, the line and the field, before anything is written.

A file in another Unicode encoding is told by its byte-order mark; a row's fields are
checked against their kinds (FIELD_KINDS); a string holding a lone surrogate, which is no
text, is refused.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from shiftbench.core.data.names import RULE, is_safe_name
from shiftbench.errors import InputError

# UTF-32's little-endian mark starts with UTF-16's: the longer marks are tried first
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def wrong_unicode(path: Path | str, data: bytes) -> InputError | None:
    """The error for a file in another Unicode encoding than UTF-8, told by the byte-order
    mark it starts with (as a spreadsheet's "Unicode text" export does); None for other
    bytes. The bytes are text, only encoded otherwise: the message says so, and how to fix it."""
    for mark, name in _BOMS:
        if data.startswith(mark):
            return InputError(
                f"{path}: {name} text (it starts with {name}'s byte-order mark), not UTF-8; "
                "save it as UTF-8"
            )
    return None


def read_jsonl(
    path: Path,
    *,
    required: Iterable[str] = (),
    strings: Iterable[str] = (),
    missing_ok: bool = False,
    values: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file, each checked as it is read.

    Every line must be one JSON object holding the `required` fields; each of `strings`
    that a row holds must be a string, and each field of `values` that it holds a value of
    its kind (FIELD_KINDS). A fault is an InputError naming the file, the line and the
    field, so a truncated or hand-edited file fails in one line before anything is
    written. A missing file is an error too, unless `missing_ok` (then no rows).
    """
    need, texts, kinds = tuple(required), tuple(strings), dict(values or {})
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        if missing_ok:
            return []
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a JSON Lines file") from None
    rows: list[dict[str, Any]] = []
    with handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                other = wrong_unicode(path, raw) if number == 1 else None
                if other is not None:
                    raise other from None
                raise InputError(
                    f"{path}:{number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                    f"column {len(raw[: exc.start].decode('utf-8', 'replace')) + 1})"
                ) from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                # the line stops inside the row: at its end, or inside a string it opened
                cut = exc.pos >= len(line.rstrip("\r\n")) or exc.msg.startswith("Unterminated")
                why = (
                    "the line ends before the row does" if cut else f"{exc.msg}, column {exc.colno}"
                )
                raise InputError(f"{path}:{number}: not valid JSON ({why})") from None
            if not isinstance(row, dict):
                raise InputError(f"{path}:{number}: a row must be a JSON object")
            # only a \uD800-\uDFFF escape makes a surrogate (UTF-8 bytes cannot)
            escaped = SURROGATE_ESCAPE.search(line) is not None
            check_row(row, f"{path}:{number}", need, texts, kinds, surrogates=escaped)
            rows.append(row)
    return rows


def check_row(
    row: dict[str, Any],
    where: str,
    need: tuple[str, ...],
    texts: tuple[str, ...],
    kinds: Mapping[str, str] | None = None,
    *,
    surrogates: bool = True,
) -> None:
    """A row holds the `need` fields, each of `texts` it holds is a string, and each
    field of `kinds` it holds a value of that kind; with `surrogates`, no string in it
    holds a lone surrogate."""
    absent = [f for f in need if f not in row]
    if absent:
        raise InputError(f"{where}: missing field(s) {', '.join(absent)}")
    for f in texts:
        if f in row and not isinstance(row[f], str):
            raise InputError(f"{where}: field {f} must be a string, not {shown_value(row[f])}")
    for f, kind in (kinds or {}).items():
        allowed, what = FIELD_KINDS[kind]
        if f in row and not allowed(row[f]):
            raise InputError(f"{where}: field {f} must be {what}, not {shown_value(row[f])}")
    if surrogates:
        for f, value in row.items():
            found = _lone_surrogate(value)
            if found is not None:
                # a lone surrogate is no character: it cannot be written as UTF-8 (to a
                # file, a Parquet column, the Hub) nor read by a tokenizer
                raise InputError(
                    f"{where}: field {f} holds a lone surrogate (\\u{ord(found):04x}), which "
                    "is not Unicode text"
                )


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def shown_value(value: Any) -> str:
    """A value as a message names it: null, NaN, inf, a string itself (quoted, cut after 80
    characters), or its type."""
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return repr(value[:80]) + ("..." if len(value) > 80 else "")
    return type(value).__name__


def _label(value: Any) -> bool:
    return _finite(value) or isinstance(value, str)


def _listed(value: Any) -> bool:
    return isinstance(value, list) and bool(value)


# What a checked field may hold: a score a finite number; a label a finite number or a
# string (mteb's datasets use both), never null, NaN or a list; a name that becomes a
# path a safe name (names.py); a rating item's id starts with its config's name.
FIELD_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "score": (_finite, "a finite number"),
    "label": (lambda v: _finite(v) or isinstance(v, str), "a finite number or a string"),
    "name": (is_safe_name, f"a safe name ({RULE.removeprefix('a name must be ')})"),
    "item": (
        lambda v: isinstance(v, str) and is_safe_name(v.split("/")[0]),
        "CONFIG/... with CONFIG a safe name (letters, digits and . _ - +, a letter or digit first)",
    ),
    # a clustering row's text and label, or its set of texts and their labels (mteb's
    # original layout, HTEB's nested clustering datasets)
    "texts": (
        lambda v: isinstance(v, str) or (_listed(v) and all(isinstance(x, str) for x in v)),
        "a string or a list of strings",
    ),
    "labels": (
        lambda v: _label(v) or (_listed(v) and all(map(_label, v))),
        "a finite number, a string or a list of them",
    ),
}
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # a JSON escape of a surrogate
SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string, or in the strings of a list or object."""
    if isinstance(value, str):
        match = SURROGATE.search(value)
        return match.group() if match else None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        found = _lone_surrogate(item)
        if found is not None:
            return found
    return None


def read_json(path: Path, missing: str | None = None) -> Any:
    """The JSON document in the file `path`. Every way it can fail to be one is an
    InputError naming the file: `missing` (or `PATH: no such file`) when there is no file,
    then a folder in its place, bytes that are not UTF-8, text that is not JSON (with the
    line and column)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(missing or f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a JSON file") from None
    except UnicodeDecodeError:
        with open(path, "rb") as handle:
            other = wrong_unicode(path, handle.read(4))
        raise other or InputError(f"{path}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
        ) from None
