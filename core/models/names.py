"""What a model is called where people read it: a name given as `NAME=SPEC`, else the
model's own name.

`-m mini=/models/ft-3` loads the model at /models/ft-3 and shows and records it as `mini`.
A model given by a local path alone is called by its own name (its model card's, else its
configuration's Hub id, else its folder's), never by the path: a path is long, says
nothing a reader recognises, and belongs to one machine.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

from shiftbench.errors import InputError

NAME_LIMIT = 100  # characters of a display name
# specs whose own text may hold '=' (an endpoint's URL query); a name goes before them
NEVER_SPLIT = ("openai:", "mteb:")
# what sentence-transformers and the Hub's template write when a card names no model
GENERIC = {
    "sentence transformer model", "sentencetransformer", "cross encoder model",
    "crossencoder", "sparseencoder", "sparse encoder model", "model id", "model card",
}  # fmt: skip
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
HUB_CACHE = re.compile(r"models--([A-Za-z0-9][A-Za-z0-9._-]*)--([A-Za-z0-9][A-Za-z0-9._-]*)")


def split_named(item: str, option: str, what: str = "model") -> tuple[str | None, str]:
    """(NAME, SPEC) of `NAME=SPEC`, or (None, item) when `item` names nothing: it holds
    no '=', the whole of it exists as a path (a folder whose name holds '=' is a folder),
    or it is an endpoint or mteb spec, whose text may hold '=' of its own.

    Raises:
        InputError: An empty or unreadable NAME, or nothing after '='.
    """
    if "=" not in item or item.startswith(NEVER_SPLIT) or as_path(item):
        return None, item
    name, _, spec = item.partition("=")
    check_name(name, f"{option} {item!r}")
    if not spec:
        raise InputError(f"{option} {item!r}: no {what} after '='")
    return name, spec


def check_name(name: str, where: str) -> str:
    """`name` when it can stand in tables, folder names, plots and cards: not empty, no
    newline or other control character, at most NAME_LIMIT characters."""
    if not name.strip():
        raise InputError(f"{where}: the name before '=' is empty")
    bad = next((c for c in name if unicodedata.category(c) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        raise InputError(
            f"{where}: the name before '=' holds the control character U+{ord(bad):04X}"
        )
    if len(name) > NAME_LIMIT:
        raise InputError(
            f"{where}: the name before '=' is {len(name)} characters; a name is at most "
            f"{NAME_LIMIT}"
        )
    return name


def own_name(folder: Path) -> str:
    """A local model folder's own name: its model card's (README.md: the model-index name
    or the first heading, unless it is a template's placeholder), else the Hub id its
    configuration was loaded from (`_name_or_path`), else the Hub id of a Hugging Face
    cache snapshot, else the folder's name."""
    folder = Path(os.path.abspath(folder))  # `.` and `..` resolved, symbolic links kept
    for found in (_card_name(folder), _config_name(folder), _cache_name(folder)):
        if found is not None:
            return found
    return folder.name[:NAME_LIMIT] or "model"


def as_path(item: str) -> bool:
    """Whether `item` exists as a path here."""
    try:
        return Path(item).exists()
    except (OSError, ValueError):  # a name too long or holding NUL is no path
        return False


def _usable(name: object) -> str | None:
    if not isinstance(name, str):
        return None
    name = re.sub(r"\s+", " ", name).strip()
    if (
        not name
        or len(name) > NAME_LIMIT
        or name.lower() in GENERIC
        or " based on " in name  # sentence-transformers' default for a model it trained
        or any(unicodedata.category(c) == "Cc" for c in name)
    ):
        return None
    return name


def _card_name(folder: Path) -> str | None:
    card = folder / "README.md"
    try:
        text = card.read_text(encoding="utf-8")[:200_000]
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is not None:
            indexed = _model_index_name("\n".join(lines[1:end]))
            if indexed is not None:
                return indexed
            lines = lines[end + 1 :]
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            heading = re.sub(r"^model card for\s+", "", line[2:].strip(), flags=re.I)
            return _usable(heading.strip("*_` "))
    return None


def _model_index_name(front_matter: str) -> str | None:
    import yaml

    try:
        data = yaml.safe_load(front_matter)
    except yaml.YAMLError:
        return None
    index = data.get("model-index") if isinstance(data, dict) else None
    if isinstance(index, list) and index and isinstance(index[0], dict):
        return _usable(index[0].get("name"))
    return None


def _config_name(folder: Path) -> str | None:
    for file in ("config_sentence_transformers.json", "config.json"):
        try:
            config = json.loads((folder / file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        value = config.get("_name_or_path") if isinstance(config, dict) else None
        if isinstance(value, str) and HUB_ID.fullmatch(value):
            return value
    return None


def _cache_name(folder: Path) -> str | None:
    """org/name of a Hugging Face cache snapshot (`models--org--name/snapshots/<sha>`)."""
    if folder.parent.name == "snapshots":
        found = HUB_CACHE.fullmatch(folder.parent.parent.name)
        if found:
            return f"{found.group(1)}/{found.group(2)}"
    return None
