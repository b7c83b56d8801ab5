"""validate's settings are declared once, as gen's are: a field added to ValidateSettings
(with its help sentence and section) is an option of `validate`, in its --help section; a
key of the spec's validate section, read, checked against its bound and handed to the
settings by name; a line of `init`'s starter spec and a row of the spec reference. The
judge options are declared once, on JudgeSettings, for validate and judge-calibrate alike.
And gen's control_pos is a list end to end."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
from shiftbench.gen.controls import parse_parts_of_speech
from shiftbench.gen.settings import GenSettings
from shiftbench.runner.spec import gen_settings, read_spec, schema, stage_settings
from shiftbench.validate.settings import VALIDATE_SECTIONS, ValidateSettings

HELP = "How many checks a row may fail before it is dropped, from 0 to 3."


@dataclass(frozen=True)
class Stricter(ValidateSettings):
    """validate's settings and one more, declared as every validate setting is."""

    strictness: int = ranged(1, low=0, high=3, section="Check", show_default=True, help=HELP)


@click.command(cls=SectionedCommand, sections=settings_sections(Stricter, VALIDATE_SECTIONS, {}),
               context_settings=CONTEXT)  # fmt: skip
@settings_options(Stricter, skip=("quiet",))
def stricter(**given: object) -> None:
    s = Stricter(**settings_values(Stricter, given))
    click.echo(f"strictness {s.strictness}; judges {s.judges}; meaning {s.meaning_encoder}")


def test_the_field_is_an_option_in_its_section_of_help():
    result = CliRunner().invoke(stricter, ["--help"])
    assert result.exit_code == 0
    check = result.stdout.split("Check options:\n", 1)[1].split("\n\n", 1)[0]
    assert check.splitlines()[-2:] == [
        "  --strictness INTEGER RANGE      How many checks a row may fail before it is",
        "                                  dropped, from 0 to 3.  [default: 1; 0<=x<=3]",
    ]
    given = CliRunner().invoke(
        stricter,
        ["--strictness", "2", "--judge", "embedded", "--judge", "ollama:qwen2.5:7b",
         "--meaning-encoder", "None"],
    )  # fmt: skip
    assert given.stdout == (
        "strictness 2; judges ('embedded', 'ollama:qwen2.5:7b'); meaning None\n"
    )
    refused = CliRunner().invoke(stricter, ["--strictness", "4"])
    assert refused.exit_code == 2
    assert "Invalid value for '--strictness': 4 is not in the range 0<=x<=3." in refused.stderr


def test_the_field_is_a_spec_key_read_by_name(tmp_path):
    _, sections = schema(validate=Stricter)
    validate = {f.key: f for f in next(s for s in sections if s.key == "validate").fields}
    assert (validate["strictness"].kind, validate["strictness"].help) == ("integer", HELP)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "output: out\nsources:\n  - name: sample\ncache_dir: cache\n"
        "validate:\n  strictness: 3\n  judges: [embedded]\n  meaning_encoder: none\n"
        "  markers: markers.json\n",
        encoding="utf-8",
    )
    read = read_spec(spec, validate=Stricter)
    values = read.values
    settings = stage_settings(
        Stricter, values["validate"], cache_dir=values["cache_dir"], quiet=True
    )
    assert settings == Stricter(
        strictness=3, judges=("embedded",), meaning_encoder=None,
        markers_file=tmp_path / "markers.json", cache_dir=tmp_path / "cache", quiet=True,
    )  # fmt: skip
    spec.write_text(spec.read_text(encoding="utf-8").replace("3", "7"), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_spec(spec, validate=Stricter)
    assert str(refused.value) == f"{spec}:6: validate.strictness: 7 is not in the range 0<=x<=3."
    with pytest.raises(InputError, match=r"validate\.strictness: unknown key"):
        read_spec(spec)  # validate's own settings have no such key


def test_the_field_is_a_line_of_the_starter_spec_and_a_row_of_the_reference():
    lines = starter("spec.yaml", cli, schema(validate=Stricter)).splitlines()
    at = lines.index("  # strictness: 1")
    assert lines[at - 1] == f"  # {HELP}"
    assert "strictness" not in starter("spec.yaml", cli)
    row = f"| `strictness` | integer | `1` | `validate --strictness` | {HELP} |"
    assert row in spec_reference(schema(validate=Stricter)).splitlines()
    assert "strictness" not in spec_reference()


def test_validate_and_judge_calibrate_show_the_judge_options_alike():
    def rows(command: click.Command) -> dict[str, tuple[str, str]]:
        ctx = click.Context(command)
        return {p.name or "": p.get_help_record(ctx) for p in command.params
                if isinstance(p, click.Option)}  # fmt: skip

    validate, calibrate = rows(cli.commands["validate"]), rows(cli.commands["judge-calibrate"])
    judge = ["judges", "paraplue", "judge_scoring", "judge_tokens", "base_url", "concurrency",
             "batch_size", "engine", "cache_dir", "no_cache"]  # fmt: skip
    assert [n for n in calibrate if n in validate] == [*judge, "quiet", "verbose"]
    assert all(validate[n] == calibrate[n] for n in judge)
    assert "judge_modes" in validate  # calibration always rates similarity


def test_control_pos_is_a_list_from_the_option_and_the_spec(tmp_path):
    # --control-pos verb,noun --control-pos adverb
    given = settings_values(GenSettings, {"control_pos": ("verb,noun", "adverb")})
    assert GenSettings(**given).control_pos == ("verb", "noun", "adverb")
    assert GenSettings().control_pos == ("verb", "adjective")
    assert GenSettings(control_pos="adverb, noun").control_pos == ("adverb", "noun")
    spec = tmp_path / "spec.yaml"
    for written, want in [("adjective", ("adjective",)), ("verb,adverb", ("verb", "adverb")),
                          ("[noun, verb]", ("noun", "verb"))]:  # fmt: skip
        spec.write_text(
            f"output: out\nsources:\n  - name: sample\ncontrol_pos: {written}\n",
            encoding="utf-8",
        )
        read = read_spec(spec)
        found = gen_settings(read.values, read.sources[0], output=Path("out"), quiet=True)
        assert found.control_pos == want, written


def test_control_pos_keeps_its_messages(invoke_quiet):
    for value, named in [("verb,colour", "colour"), ("", "nothing")]:
        with pytest.raises(InputError) as refused:
            parse_parts_of_speech(GenSettings(control_pos=value).control_pos)
        assert str(refused.value) == (
            f"control_pos takes parts of speech from verb, adjective, adverb, noun, not {named!r}"
        )
        result = invoke_quiet(value)
        assert result == (
            "Error: --control-pos takes parts of speech from verb, adjective, adverb, noun, "
            f"not {named!r}"
        )


@pytest.fixture
def invoke_quiet(tmp_path, monkeypatch):
    """gen's one-line error for a --control-pos value (a dry run: nothing is loaded)."""
    monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(tmp_path / "cache"))

    def run(value: str) -> str:
        out = tmp_path / "out"
        result = CliRunner().invoke(
            cli, ["gen", "sample", "-t", "synonym-swap-1", "--control-pos", value, "--limit",
                  "2", "--dry-run", "-q", "-o", str(out)],
        )  # fmt: skip
        assert result.exit_code == 2, result.output
        assert not out.exists()
        return result.stderr.strip()

    return run
