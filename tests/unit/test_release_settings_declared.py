"""The release's and human-eval's settings are declared once, as gen's are: a field added
to ReleaseSettings, BatchSettings or ExportSettings is an option of the command built from
them, in its --help section; a key of the spec's release or human_eval section, read,
checked and handed to the settings by name (`stage_settings`); a commented line of
`init`'s starter spec; and a row of the spec reference."""

from __future__ import annotations

from dataclasses import dataclass

import click
import pytest
from click.testing import CliRunner

from shiftbench.cards.settings import RELEASE_SECTIONS, ReleaseSettings
from shiftbench.cli import cli
from shiftbench.cli.clidoc import spec_reference
from shiftbench.cli.commands.cards import PUBLISH
from shiftbench.cli.commands.from_settings import (
    settings_options,
    settings_sections,
    settings_values,
)
from shiftbench.cli.commands.options import CONTEXT
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.cli.commands.specdoc import starter
from shiftbench.core.settings import declared, ranged
from shiftbench.errors import InputError
from shiftbench.human_eval.settings import BatchSettings, ExportSettings
from shiftbench.runner.spec import read_spec, schema, stage_settings

DOI = "A DOI to cite the release by, shown in the card's citation."
BREAK = "Seconds of rest a rater is offered between two batches."


@dataclass(frozen=True)
class Cited(ReleaseSettings):
    """The release's settings and one more, declared as every release setting is."""

    doi: str | None = declared(None, section="Card and metadata", metavar="DOI", help=DOI)


@dataclass(frozen=True)
class Rested(BatchSettings):
    """human-eval batch's settings and one more."""

    rest: int = ranged(30, low=0, show_default=True, help=BREAK)


@click.command(cls=SectionedCommand, sections=settings_sections(Cited, RELEASE_SECTIONS, {}),
               context_settings=CONTEXT)  # fmt: skip
@settings_options(Cited, changes=PUBLISH)
def cited(**given: object) -> None:
    settings = Cited(**settings_values(Cited, given))
    click.echo(f"doi {settings.doi}; rai {settings.rai}; format {settings.data_format}")


@click.command(context_settings=CONTEXT)
@settings_options(Rested)
def rested(**given: object) -> None:
    click.echo(f"rest {Rested(**settings_values(Rested, given)).rest}")


def test_a_release_field_is_an_option_in_its_section_of_help():
    result = CliRunner().invoke(cited, ["--help"])
    assert result.exit_code == 0
    card = result.stdout.split("Card and metadata options:\n", 1)[1].split("\n\n", 1)[0]
    assert card.splitlines()[-2:] == [
        "  --doi DOI                 A DOI to cite the release by, shown in the card's",
        "                            citation.",
    ]
    given = CliRunner().invoke(
        cited, ["--repo", "o/n", "--version", "1.0.0", "--doi", "10.1/x", "--rai", "a=b,c"]
    )
    assert given.stdout == "doi 10.1/x; rai ('a=b,c',); format parquet\n"
    refused = CliRunner().invoke(cited, ["--doi", "10.1/x"])
    assert refused.exit_code == 2
    assert "Missing option '--repo'." in refused.stderr


def test_a_batch_field_is_an_option_with_its_bound():
    result = CliRunner().invoke(rested, ["--help"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-3:-1] == [
        "  --rest INTEGER RANGE           Seconds of rest a rater is offered between two",
        "                                 batches.  [default: 30; x>=0]",
    ]
    assert CliRunner().invoke(rested, ["--rest", "5"]).stdout == "rest 5\n"
    refused = CliRunner().invoke(rested, ["--rest", "-1"])
    assert refused.exit_code == 2
    assert "Invalid value for '--rest': -1 is not in the range x>=0." in refused.stderr


def test_the_fields_are_spec_keys_read_by_name(tmp_path):
    _, sections = schema(batch=Rested, release=Cited)
    keys = {s.key: {f.key: f for f in s.fields} for s in sections}
    assert (keys["release"]["doi"].kind, keys["release"]["doi"].help) == ("string", DOI)
    assert (keys["human_eval"]["rest"].kind, keys["human_eval"]["rest"].help) == ("integer", BREAK)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "output: out\nsources:\n  - name: sample\nhuman_eval:\n  rest: 10\n"
        "  formats: [html, mturk]\nrelease:\n  repo: o/n\n  version: 1.0.0\n"
        "  license: mit\n  doi: 10.1/x\n  rai: ['dataBiases=b']\n",
        encoding="utf-8",
    )
    read = read_spec(spec, batch=Rested, release=Cited)
    release = stage_settings(Cited, read.values["release"])
    assert (release.doi, release.license_id, release.data_format, release.rai) == (
        "10.1/x", "mit", "parquet", ("dataBiases=b",),
    )  # fmt: skip
    assert stage_settings(Rested, read.values["human_eval"]).rest == 10
    assert read.values["human_eval"]["formats"] == ["html", "mturk"]
    exports = [stage_settings(ExportSettings, read.values["human_eval"], fmt=f) for f in ["mturk"]]
    assert exports == [ExportSettings("mturk", 10)]
    spec.write_text(spec.read_text(encoding="utf-8").replace("rest: 10", "rest: -3"), "utf-8")
    with pytest.raises(InputError) as refused:
        read_spec(spec, batch=Rested, release=Cited)
    assert str(refused.value) == f"{spec}:5: human_eval.rest: -3 is not in the range x>=0."
    with pytest.raises(InputError, match=r"human_eval\.rest: unknown key"):
        read_spec(spec)  # the stages' own settings have no such keys


def test_the_fields_are_lines_of_the_starter_spec_and_rows_of_the_reference():
    lines = starter("spec.yaml", cli, schema(batch=Rested, release=Cited)).splitlines()
    assert lines[lines.index("  # doi: null") - 1] == f"  # {DOI}"
    assert lines[lines.index("  # rest: 30") - 1] == f"  # {BREAK}"
    plain = starter("spec.yaml", cli)
    assert "# doi:" not in plain and "# rest:" not in plain
    rows = spec_reference(schema(batch=Rested, release=Cited)).splitlines()
    assert f"| `doi` | string | `null` | `publish --doi` | {DOI} |" in rows
    assert f"| `rest` | integer | `30` | `human-eval batch --rest` | {BREAK} |" in rows
    assert "`doi`" not in spec_reference()


def test_the_spec_keys_are_todays():
    """The release and human_eval keys, their order and defaults as they were written by
    hand (license for license_id, format for data_format, formats for export's format)."""
    _, sections = schema()
    keys = {s.key: [(f.key, f.kind, f.default) for f in s.fields] for s in sections}
    assert [k for k, _, _ in keys["release"]] == [
        "repo", "version", "license", "private", "format", "rai", "date_published",
    ]  # fmt: skip
    assert ("format", "string", "parquet") in keys["release"]
    assert [k for k, _, _ in keys["human_eval"]] == [
        "scheme", "scheme_file", "per_stratum", "raters", "controls", "tolerance", "seed",
        "formats", "items_per_hit", "completion_code", "submit_url",
    ]  # fmt: skip
    assert ("formats", "list of strings", ["html"]) in keys["human_eval"]
