"""WordNet for the word-swap controls: find the database, open it with NLTK, fingerprint it.

Where it is looked for, in order: `--wordnet-dir`, `$SHIFTBENCH_WORDNET_DIR`, NLTK's own
data folders (what `nltk.download("wordnet")` installs), then Debian's `wordnet-base`
folder. A bare WordNet 3.0 `dict` folder works: Debian's lacks the `lexnames` file NLTK's
reader asks for, and its fixed contents are supplied here.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.core.messages import option
from shiftbench.errors import InputError

WORDNET_ENV = "SHIFTBENCH_WORDNET_DIR"
SYSTEM_FOLDERS = ("/usr/share/wordnet",)  # Debian's and Ubuntu's wordnet-base
# The files the word-swap rules read: their bytes are the database's fingerprint.
DATABASE_FILES = (
    *(f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")),
    *(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")),
    "cntlist.rev",  # sense-tagged counts, which rank the synonyms
)

# WordNet 3.0's lexicographer files in number order (lexnames(5WN)); the digit after each
# group is its syntactic category (1 noun, 2 verb, 3 adjective, 4 adverb).
_LEXNAME_GROUPS = (
    ("adj", 3, "all pert"),
    ("adv", 4, "all"),
    (
        "noun",
        1,
        "Tops act animal artifact attribute body cognition communication event feeling food "
        "group location motive object person phenomenon plant possession process quantity "
        "relation shape state substance time",
    ),
    (
        "verb",
        2,
        "body change cognition communication competition consumption contact creation "
        "emotion motion perception possession social stative weather",
    ),
    ("adj", 3, "ppl"),
)


def lexnames_text() -> str:
    """The `lexnames` file of WordNet 3.0: number, file name and category, tab-separated."""
    names = [
        (f"{group}.{name}", category)
        for group, category, listed in _LEXNAME_GROUPS
        for name in listed.split()
    ]
    return "".join(f"{i:02d}\t{name}\t{category}\n" for i, (name, category) in enumerate(names))


@dataclass(frozen=True)
class WordNet:
    """An opened WordNet database and what identifies its contents."""

    reader: Any
    version: str
    sha256: str
    origin: str  # where it was found; not written to run folders (it is machine-specific)

    def describe(self) -> dict[str, str]:
        return {"version": self.version, "sha256": self.sha256}


def open_wordnet(folder: str | None = None) -> WordNet:
    """The WordNet database at `folder`, else the first one found (see the module doc)."""
    chosen = folder or os.environ.get(WORDNET_ENV) or None
    return _open(chosen)


@functools.cache
def _open(folder: str | None) -> WordNet:
    if folder is not None:
        path = Path(folder)
        missing = [f for f in ("index.noun", "data.noun") if not (path / f).is_file()]
        if missing:
            raise InputError(
                f"WordNet folder {folder} holds no WordNet database (no {missing[0]}); "
                "it should be a WordNet 3.0 dict folder such as /usr/share/wordnet"
            )
        return _fingerprint(_folder_reader(path), str(path))
    installed = _nltk_installed()
    if installed is not None:
        return installed
    for system in SYSTEM_FOLDERS:
        if (Path(system) / "data.noun").is_file():
            return _fingerprint(_folder_reader(Path(system)), system)
    raise InputError(
        "WordNet is not installed: run python -m nltk.downloader wordnet, or point "
        f"{option('wordnet_dir')} (or ${WORDNET_ENV}) at a WordNet 3.0 dict folder such as "
        "Debian's /usr/share/wordnet (apt install wordnet-base)"
    )


def _nltk_installed() -> WordNet | None:
    import nltk

    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        return None
    from nltk.corpus import wordnet

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wordnet.ensure_loaded()
    return _fingerprint(wordnet, "nltk_data")


def _folder_reader(path: Path) -> Any:
    """NLTK's WordNet reader over a dict folder, with `lexnames` supplied when missing."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class FolderReader(WordNetCorpusReader):
        def open(self, fileid: str) -> Any:
            if fileid == "lexnames" and not (path / fileid).is_file():
                return io.StringIO(lexnames_text())
            return super().open(fileid)

        def map_wn(self, version: str = "wordnet") -> None:
            # NLTK maps other WordNet versions onto its own download, for the multilingual
            # data only; that is not used here, and the download may not exist.
            return None

    resolved = str(path.resolve())
    if resolved not in nltk.data.path:
        nltk.data.path.append(resolved)  # NLTK reads only from folders on its data path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        return FolderReader(resolved, None)


def _fingerprint(reader: Any, origin: str) -> WordNet:
    digest = hashlib.sha256()
    for name in DATABASE_FILES:
        try:
            with reader.open(name) as fh:
                body = fh.read()
        except OSError:  # a database without counts: its absence is part of the print
            body = ""
        digest.update(f"{name}\0{len(body)}\0".encode())
        digest.update(body.encode("utf-8") if isinstance(body, str) else body)
    return WordNet(reader, reader.get_version(), digest.hexdigest(), origin)
