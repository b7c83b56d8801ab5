"""What a card and a release declare: the settings the cards stage's functions take
(`shiftbench.cards.api` gives them to users; publishing reads them too)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ReleaseSettings:
    """What a card and a release declare; every field is the `shiftbench card` and
    `shiftbench publish` option of its name.

    Attributes:
        repo: The Hub dataset repository, ORG/NAME (the card's load snippets name it).
        version: The version, X.Y.Z (a leading v is accepted); tagged vX.Y.Z.
        human_dirs: Human-eval batch folders with a report, shown in the card.
        license_id: The Hub license id to declare when the source's is not one.
        private: Create the repository as private.
        data_format: `parquet` (typed data files and croissant.json) or `jsonl` (the
            files as gen writes them). None: Parquet for a release, the run folder's own
            JSON Lines for a card.
        results: evaluate results folders, `DIR` or `NAME=DIR` (NAME: the model's Hub id,
            needed when it was evaluated from a local path), whose main scores go into the
            card's model-index and the release's eval_results/.
        rai: Croissant responsible-AI fields to add or replace, `FIELD=TEXT`.
        date_published: Croissant's datePublished (ISO 8601); none by default, so equal
            content gives equal bytes.
    """

    repo: str | None = None
    version: str | None = None
    human_dirs: tuple[Path, ...] = ()
    license_id: str | None = None
    private: bool = False
    data_format: str | None = None
    results: tuple[str, ...] = ()
    rai: tuple[str, ...] = ()
    date_published: str | None = None
