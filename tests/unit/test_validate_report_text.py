"""validation.md's sentences as a reader sees them: the meaning section names its encoder,
and the validate guide's Decision example is the line validate writes today."""

from __future__ import annotations

import re
from pathlib import Path

from shiftbench.core.text.checks import CHECKS
from shiftbench.validate.report_text import decisions, validation_markdown

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "validate.md"


def _report(encoder: dict) -> dict:
    """A validation.json of one paraphrase config of 4 rows, 2 of them meaning-changed."""
    config = {
        "transform": "paraphrase", "axis": "Lexical/Stylistic", "rows": 4,
        "error_counts": dict.fromkeys(CHECKS, 0), "error_rates": dict.fromkeys(CHECKS, 0.0),
        "failed_rows": 0, "total_error_rate": 0.0, "mean_edit_distance": 0.5, "examples": {},
        "meaning": {"encoder": encoder, "threshold": 0.45, "evidence": ["negation"],
                    "checked_rows": 4, "changed_rows": 2, "changed_rate": 0.5,
                    "not_checked_rows": 0, "examples": []},
    }  # fmt: skip
    return {
        "shiftbench_version": "0",
        "language_id": {"name": "lingua", "min_letters": 12},
        "checks": list(CHECKS),
        "configs": {"paraphrase-s1": config},
    }


def _meaning_sentence(report: dict) -> str:
    page = validation_markdown(report)
    return next(line for line in page.splitlines() if "The meaning check marks a row" in line)


def test_the_meaning_section_names_its_encoder():
    """The encoder as validation.json records it (describe()'s `id`, the name every table
    of shiftbench gives a model); it read '?' while the report looked for a `name`."""
    default = {"id": "all-MiniLM-L6-v2", "revision": "c9745ed", "similarity": "cosine"}
    assert _meaning_sentence(_report(default)) == (
        "A row that fails no check above passes the form checks; that says nothing of its "
        "meaning. The meaning check marks a row meaning-changed when a field's drift under "
        "all-MiniLM-L6-v2 is above 0.45 or the output says or unsays a negation: a warning, "
        "not counted in the total above. It checks paraphrase, back-translation and style "
        "change (English fields under the default encoder)."
    )
    # a --meaning-encoder NAME=PATH is named by its NAME, as in the measures' table
    mine = {"id": "e5", "path": "/models/e5-small", "similarity": "cosine"}
    assert "when a field's drift under e5 is above 0.45 " in _meaning_sentence(_report(mine))


# The quickstart's run (`shiftbench gen sample --max-new-tokens 64 -o runs/sample`, SmolLM2,
# seed 1337) as validate counted it: 6 of 42 rows failed a check, and the meaning check
# marked 17 of 42. Those counts come from the generator; the rest of the line (the checks
# listed as unreliable and their figures) comes from the packaged measurement
# (validate/measured.json), which `shiftbench measure-checks --write` remakes.
QUICKSTART = {"rows": 42, "failed_rows": 6, "meaning_checked": 42, "meaning_changed": 17}


def test_the_guides_decision_example_is_what_validate_writes():
    """A new measurement that changes what the line lists fails here until the guide's
    example is written again (it once kept 'misses 31.0%' when validate printed 6.0%)."""
    page = GUIDE.read_text(encoding="utf-8")
    shown = re.findall(r"^- \*\*paraphrase-s1337\*\* \(en\): .*$", page, re.MULTILINE)
    assert len(shown) == 1
    q = QUICKSTART
    config = {
        "rows": q["rows"], "failed_rows": q["failed_rows"],
        "total_error_rate": round(q["failed_rows"] / q["rows"], 4),
        "meaning": {"checked_rows": q["meaning_checked"], "changed_rows": q["meaning_changed"],
                    "changed_rate": round(q["meaning_changed"] / q["meaning_checked"], 4)},
    }  # fmt: skip
    meta = {
        "source": {"name": "sample"},
        "configs": {"paraphrase-s1337": {"kind": "variant", "source_language": "en"}},
    }
    report = {"configs": {"paraphrase-s1337": config}}
    assert decisions(report, meta) == shown
