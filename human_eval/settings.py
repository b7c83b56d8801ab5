"""human-eval's settings, each declared once: its type, default, bound or choices and help
live on its field, and `shiftbench human-eval batch` and `export`'s options, the spec's
human_eval keys, `init`'s starter spec and the spec reference are all built from them.

    >>> from shiftbench.human_eval.settings import BatchSettings
    >>> BatchSettings(scheme_file="my-scheme.json").scheme_file
    PosixPath('my-scheme.json')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from shiftbench.core.settings import check, chosen, declared, ranged
from shiftbench.errors import InputError
from shiftbench.human_eval.export import FORMATS as EXPORT_FORMATS


@dataclass(frozen=True)
class BatchSettings:
    """How rating batches are drawn; every field is the `shiftbench human-eval batch`
    option of its name, and its help is the option's (`shiftbench human-eval batch
    --help`). `scheme_file` also takes a str."""

    scheme: str = chosen(
        "quality",
        "quality",
        "similarity",
        show_default=True,
        help="quality: rewrite quality and fluency, 1-5; similarity: meaning similarity, 0-5.",
    )
    scheme_file: Path | None = declared(
        None,
        file=True,
        path=True,
        help="Your own instructions, labels and examples, shaped like the packaged scheme "
        "(human_eval/schemes/<scheme>.json).",
    )
    per_stratum: int = ranged(
        50,
        low=1,
        show_default=True,
        help="Items drawn per stratum (a transformation, and its output language when that "
        "differs from the source's).",
    )
    raters: int = ranged(3, low=1, show_default=True, help="Batches to make: one per rater.")
    controls: int = ranged(
        1,
        low=1,
        show_default=True,
        help="Control pairs per batch: each is one easy positive (a text and itself) and one "
        "easy negative (two unrelated texts).",
    )
    tolerance: float = ranged(
        1.0,
        float,
        low=0,
        show_default=True,
        help="How far a control rating may be from the expected one.",
    )
    seed: int = declared(
        0, show_default=True, help="Seed of the sample, the controls and every batch's order."
    )

    def __post_init__(self) -> None:
        if isinstance(self.scheme_file, str):  # as the spec and callers write it
            object.__setattr__(self, "scheme_file", Path(self.scheme_file))
        check(self)


@dataclass(frozen=True)
class ExportSettings:
    """How `shiftbench human-eval export` writes a batch folder's batches; every field is
    the option of its name, and its help is the option's (`shiftbench human-eval export
    --help`). The spec's `formats` lists several, each exported in turn."""

    fmt: str = chosen(
        "html",
        *EXPORT_FORMATS,
        key="formats",
        flags=("--format",),
        show_default=True,
        spec_list=True,
        help="html: a self-contained rating form per batch; mturk: HIT template and batch CSV "
        "(also Turkle, localturk); labelstudio: tasks and labeling config; argilla: the folder "
        "argilla.Dataset.from_disk loads; prolific: the html forms for a Prolific study (needs "
        "--completion-code).",
        spec_help="Export formats, each into <batch>/export/<format>/ (html, mturk, "
        "labelstudio, argilla).",
    )
    items_per_hit: int = ranged(
        10, low=1, show_default=True, help="Items per MTurk HIT (mturk format)."
    )
    completion_code: str | None = declared(
        None,
        metavar="CODE",
        help="prolific format: the study's completion code, shown (with the link back to "
        "Prolific) once the ratings are in. The rater id is the URL's PROLIFIC_PID; give the "
        "study URL ?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}"
        "&SESSION_ID={{%SESSION_ID%}}.",
    )
    submit_url: str | None = declared(
        None,
        metavar="URL",
        help="prolific format: POST each participant's ratings CSV here (as text/plain; the "
        "endpoint must allow cross-origin requests). Default: the form downloads it.",
    )

    def __post_init__(self) -> None:
        check(self)
        if self.fmt != "prolific":
            if self.completion_code is not None or self.submit_url is not None:
                raise InputError("--completion-code and --submit-url apply to --format prolific")
            return
        if self.completion_code is None:
            raise InputError(
                "--format prolific needs --completion-code, the code Prolific gives the study"
            )
        if not re.fullmatch(r"[A-Za-z0-9]{4,40}", self.completion_code):
            raise InputError(
                f"completion code {self.completion_code!r} is not 4 to 40 letters and digits"
            )
        if self.submit_url is not None:
            url = urlsplit(self.submit_url)
            if url.scheme not in ("http", "https") or not url.netloc:
                raise InputError(f"--submit-url {self.submit_url!r} is not an http(s) URL")
