"""evaluate's and probe's settings are declared once, on their settings fields
(shiftbench.evaluate.settings): a field added to EvalSettings is an option in its --help
section, a key of the spec's evaluate section (read, checked and handed to the settings
by name), a starter-spec line and a spec-reference row; the encoder's options are
EncoderSettings' fields in both commands; lists are tuples."""

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
from shiftbench.core.settings import declarations, ranged
from shiftbench.errors import InputError
from shiftbench.evaluate.settings import (
    EVALUATE_SECTIONS,
    EncoderSettings,
    EvalSettings,
    ProbeRunSettings,
)
from shiftbench.runner.spec import read_spec, schema, stage_settings

HELP = "Skip a split with fewer rows than this."


@dataclass(frozen=True)
class Wider(EvalSettings):
    """evaluate's settings and one more, declared as every evaluate setting is."""

    min_rows: int = ranged(0, low=0, section="Scoring", show_default=True, help=HELP)


@click.command(cls=SectionedCommand, sections=settings_sections(Wider, EVALUATE_SECTIONS, {}),
               context_settings=CONTEXT)  # fmt: skip
@settings_options(Wider, skip=("output", "quiet"))
def wider(**given: object) -> None:
    settings = Wider(**settings_values(Wider, given))
    click.echo(f"min_rows {settings.min_rows}; prompts {settings.prompts}")


def test_the_field_is_an_option_in_its_section_of_help():
    result = CliRunner().invoke(wider, ["--help"])
    assert result.exit_code == 0
    scoring = result.stdout.split("Scoring options:\n", 1)[1].split("\n\n", 1)[0]
    assert scoring.splitlines()[-2:] == [
        "  --min-rows INTEGER RANGE        Skip a split with fewer rows than this.",
        "                                  [default: 0; x>=0]",
    ]
    given = CliRunner().invoke(wider, ["--min-rows", "5", "--prompt", "STS-query=query: "])
    assert given.stdout == "min_rows 5; prompts {'STS-query': 'query: '}\n"
    refused = CliRunner().invoke(wider, ["--min-rows", "-1"])
    assert refused.exit_code == 2
    assert "Invalid value for '--min-rows': -1 is not in the range x>=0." in refused.stderr


def _spec(tmp_path: Path, evaluate: str) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"output: out\nsources:\n  - name: sample\nevaluate:\n{evaluate}", encoding="utf-8"
    )
    return spec


def test_the_field_is_a_spec_key_read_by_name(tmp_path):
    _, sections = schema(evaluate=Wider)
    keys = {f.key: f for f in next(s for s in sections if s.key == "evaluate").fields}
    assert (keys["min_rows"].kind, keys["min_rows"].help) == ("integer", HELP)
    spec = _spec(tmp_path, "  models: [m]\n  min_rows: 4\n  prompts: {query: 'q: '}\n")
    read = read_spec(spec, evaluate=Wider)
    settings = stage_settings(Wider, read.values["evaluate"], output=tmp_path, quiet=True)
    assert (settings.min_rows, settings.prompts, settings.output) == (4, {"query": "q: "}, tmp_path)
    spec.write_text(spec.read_text(encoding="utf-8").replace("4", "-3"), encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_spec(spec, evaluate=Wider)
    assert str(refused.value) == f"{spec}:6: evaluate.min_rows: -3 is not in the range x>=0."
    with pytest.raises(InputError, match=r"evaluate\.min_rows: unknown key"):
        read_spec(spec)  # evaluate's own settings have no such key


def test_the_field_is_a_line_of_the_starter_spec_and_a_row_of_the_reference():
    lines = starter("spec.yaml", cli, schema(evaluate=Wider)).splitlines()
    at = lines.index("  # min_rows: 0")
    assert lines[at - 1] == f"  # {HELP}"
    assert "min_rows" not in starter("spec.yaml", cli)
    row = f"| `min_rows` | integer | `0` | `evaluate --min-rows` | {HELP} |"
    assert row in spec_reference(schema(evaluate=Wider)).splitlines()
    assert "min_rows" not in spec_reference()


def test_the_spec_section_becomes_the_settings_by_name(tmp_path):
    """run's evaluate stage gets the settings the spec names, lists as tuples and mappings
    as mappings, as the command would build them from the same options."""
    spec = _spec(
        tmp_path,
        "  models: [m]\n  batch_size: 4\n  precision: float16\n  protocol: hteb\n"
        "  model_kwargs: {attn_implementation: eager}\n  faithful: judge>=4\n"
        "  resamples: 0\n  interval: expanded\n  evalrank_centre: true\n  plots: false\n"
        "  cache_dir: cache\n",
    )
    values = read_spec(spec).values["evaluate"]
    settings = stage_settings(EvalSettings, values, output=tmp_path / "r", quiet=True)
    assert settings == EvalSettings(
        batch_size=4, precision="float16", protocol="hteb",
        model_kwargs={"attn_implementation": "eager"}, faithful="judge>=4", resamples=0,
        interval="expanded", evalrank_centre=True, plots=False, cache_dir=tmp_path / "cache",
        output=tmp_path / "r", quiet=True,
    )  # fmt: skip
    assert settings.model_kwargs is not values["model_kwargs"]  # the spec's own stays its


def test_the_encoder_options_are_encoder_settings_in_both_commands():
    encoder = [f.name for f, _ in declarations(EncoderSettings)]
    assert encoder == [
        "batch_size", "device", "precision", "trust_remote_code", "model_kwargs",
        "encode_kwargs", "prompts", "cache_dir",
    ]  # fmt: skip
    for command in (cli.commands["evaluate"], cli.commands["probe"]):
        assert command.sections["Encoder"] == ("models", *encoder), command.name


def test_lists_are_tuples_and_the_options_still_take_commas():
    assert ProbeRunSettings().epsilons == (0.0, 0.05, 0.1, 0.2)
    assert ProbeRunSettings(epsilons="0.2,0,0.1").epsilons == (0.0, 0.1, 0.2)
    given = settings_values(ProbeRunSettings, {"epsilons": ("0.2,0", "0.1"), "seed": 3})
    assert ProbeRunSettings(**given).epsilons == (0.0, 0.1, 0.2)
    with pytest.raises(InputError) as refused:
        ProbeRunSettings(epsilons="0,wide")
    assert str(refused.value) == "epsilons takes numbers separated by commas, not '0,wide'"
    with pytest.raises(InputError) as refused:
        ProbeRunSettings(random_pairs="pairs")
    assert str(refused.value) == (
        "ProbeRunSettings.random_pairs: 'pairs' is not one of 'anchor', 'label-0'."
    )
    with pytest.raises(InputError) as refused:
        settings_values(EvalSettings, {"prompts": ("query",)})
    assert str(refused.value) == "--prompt 'query' is not NAME=TEXT"
