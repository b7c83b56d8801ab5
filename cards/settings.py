"""What a card and a release declare: the settings the cards stage's functions take
(`shiftbench.cards.api` gives them to users; publishing reads them too). Each is declared
once: `shiftbench card` and `publish`'s options, the spec's release keys, `init`'s starter
spec and the spec reference are built from the fields.

    >>> from shiftbench.cards.settings import ReleaseSettings
    >>> ReleaseSettings(repo="org/sample-shift", version="1.0.0").data_format is None
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shiftbench.core.data.runfolder import DATA_FORMATS
from shiftbench.core.settings import chosen, declared

# publish --help's sections, in the order they are shown
RELEASE_SECTIONS = ("Release", "Card and metadata")


@dataclass(frozen=True)
class ReleaseSettings:
    """What a card and a release declare; every field is the `shiftbench card` and
    `shiftbench publish` option of its name, and its help is publish's
    (`shiftbench publish --help`). `data_format` None: Parquet for a release, the run
    folder's own JSON Lines for a card. `private` is publish's alone."""

    repo: str | None = declared(
        None,
        section="Release",
        help="The Hub dataset repository, ORG/NAME.",
        spec_help="The Hub dataset repository, ORG/NAME; with several sources, each source's "
        "folder name is appended (ORG/NAME-<folder>). null: no publish stage.",
    )
    version: str | None = declared(
        None, section="Release", help="The version, X.Y.Z; tagged vX.Y.Z."
    )
    human_dirs: tuple[Path, ...] = declared(
        (),
        section="Card and metadata",
        key="human_eval_dirs",
        flags=("--human-eval",),
        separator="",
        exists=True,
        spec=None,  # the run's own batch folder, once its report exists
        help="A human-eval batch folder with a report, to show in the card (repeatable).",
    )
    license_id: str | None = declared(
        None,
        section="Card and metadata",
        key="license",
        flags=("--license",),
        help="The Hub license id to declare, when the source's license is not one "
        "(default: the source's, or 'other' with a note).",
    )
    private: bool = declared(False, section="Release", help="Create the repository as private.")
    data_format: str | None = chosen(
        None,
        *DATA_FORMATS,
        section="Release",
        key="format",
        flags=("--format",),
        show_default=True,
        spec_default="parquet",
        help="The release's data files: Parquet (typed; the Hub's viewer reads them as they "
        "are; with croissant.json) or JSON Lines as gen wrote them.",
    )
    results: tuple[str, ...] = declared(
        (),
        section="Card and metadata",
        metavar="[NAME=]DIR",
        separator="",
        spec=None,  # the run's own results folder, when evaluate ran
        help="A shiftbench evaluate output folder of this run: its main scores go into the "
        "card's model-index and (publish) eval_results/<model>.yaml, under the name evaluate "
        "showed (-m NAME=PATH's NAME, a local model's own name). NAME= names the folder's "
        "one model (e.g. its Hub id); results whose model id is a local path (written by an "
        "older shiftbench) need it. A DIR whose name holds '=' is read as DIR (repeatable).",
    )
    rai: tuple[str, ...] = declared(
        (),
        section="Card and metadata",
        metavar="FIELD=TEXT",
        separator="",
        help="Add to (or, for single-valued fields, replace) a Croissant responsible-AI "
        "field of croissant.json, e.g. dataLimitations='Only 8 rows per config.' "
        "(repeatable; Parquet only).",
        spec_help="Croissant responsible-AI fields to add, FIELD=TEXT each, e.g. "
        "['dataLimitations=Rewritten by a 135M model.'].",
    )
    date_published: str | None = declared(
        None,
        section="Card and metadata",
        metavar="DATE",
        help="Croissant's datePublished, ISO 8601 (default: none, so equal content gives "
        "equal bytes; Parquet only).",
    )
