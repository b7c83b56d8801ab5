"""A setting is declared once, on its settings field: a field added there (with its help
sentence and section) is an option of the command built from the settings, listed in its
--help section; a key of the spec, read and checked against its bound and handed to the
settings by name; a commented line of `init`'s starter spec; and a row of the spec
reference. Nothing but the field is written for it."""

from __future__ import annotations

from dataclasses import dataclass

import click
import pytest
from click.testing import CliRunner

from shiftbench.cli import cli
from shiftbench.cli.clidoc import spec_reference
from shiftbench.cli.commands.from_settings import (
    settings_options,
    settings_sections,
    settings_values,
)
from shiftbench.cli.commands.options import CONTEXT
from shiftbench.cli.commands.sections import SectionedCommand
from shiftbench.cli.commands.specdoc import starter
from shiftbench.core.settings import ranged
from shiftbench.errors import InputError
from shiftbench.gen.settings import GEN_SECTIONS, GenSettings
from shiftbench.runner.spec import gen_settings, read_spec, schema

HELP = "How politely each rewrite is asked for, from 0 (curt) to 5."


@dataclass(frozen=True)
class Wider(GenSettings):
    """gen's settings and one more, declared as every gen setting is."""

    politeness: int = ranged(2, low=0, high=5, section="Sampling", show_default=True, help=HELP)


@click.command(cls=SectionedCommand, sections=settings_sections(Wider, GEN_SECTIONS, {}),
               context_settings=CONTEXT)  # fmt: skip
@settings_options(Wider, skip=("output", "quiet"))
def wider(**given: object) -> None:
    settings = Wider(**settings_values(Wider, given))
    click.echo(f"politeness {settings.politeness}; languages {settings.languages}")


def test_the_field_is_an_option_in_its_section_of_help():
    result = CliRunner().invoke(wider, ["--help"])
    assert result.exit_code == 0
    sampling = result.stdout.split("Sampling options:\n", 1)[1].split("\n\n", 1)[0]
    assert sampling.splitlines()[-2:] == [
        "  --politeness INTEGER RANGE      How politely each rewrite is asked for, from 0",
        "                                  (curt) to 5.  [default: 2; 0<=x<=5]",
    ]
    given = CliRunner().invoke(
        wider, ["--politeness", "4", "--languages", "es,fr", "--languages", "de"]
    )
    assert given.stdout == "politeness 4; languages ('es', 'fr', 'de')\n"
    refused = CliRunner().invoke(wider, ["--politeness", "6"])
    assert refused.exit_code == 2
    assert "Invalid value for '--politeness': 6 is not in the range 0<=x<=5." in refused.stderr


def test_the_field_is_a_spec_key_read_by_name(tmp_path):
    _, sections = schema(Wider)
    generator = {f.key: f for f in next(s for s in sections if s.key == "generator").fields}
    assert (generator["politeness"].kind, generator["politeness"].help) == ("integer", HELP)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "output: out\nsources:\n  - name: sample\nlanguages: [es, fr]\n"
        "generator:\n  politeness: 4\n",
        encoding="utf-8",
    )
    read = read_spec(spec, Wider)
    settings = gen_settings(read.values, read.sources[0], Wider, output=tmp_path, quiet=True)
    assert (settings.politeness, settings.languages) == (4, ("es", "fr"))
    spec.write_text(spec.read_text(encoding="utf-8").replace("4", "9"), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_spec(spec, Wider)
    assert str(refused.value) == (f"{spec}:6: generator.politeness: 9 is not in the range 0<=x<=5.")
    with pytest.raises(InputError, match=r"generator\.politeness: unknown key"):
        read_spec(spec)  # gen's own settings have no such key


def test_the_field_is_a_line_of_the_starter_spec_and_a_row_of_the_reference():
    lines = starter("spec.yaml", cli, schema(Wider)).splitlines()
    at = lines.index("  # politeness: 2")
    assert lines[at - 1] == f"  # {HELP}"
    assert "politeness" not in starter("spec.yaml", cli)
    row = f"| `politeness` | integer | `2` | `gen --politeness` | {HELP} |"
    assert row in spec_reference(schema(Wider)).splitlines()
    assert "politeness" not in spec_reference()
