"""How --help is laid out: `shiftbench --help` lists the commands in the workflow's order,
and each stage command shows its options in named sections, none left out."""

from __future__ import annotations

import importlib
import pkgutil
import re

import click
import pytest

import shiftbench.cli
from shiftbench.cli import cli

# the stages in the order a release goes through them, then the helpers (each after what
# it serves), HTEB's interchange and the catalogue
ORDER = [
    "gen", "validate", "human-eval", "card", "publish", "evaluate", "report", "leaderboard",
    "probe", "run", "init", "merge", "judge-calibrate", "compare", "measure-checks", "verify",
    "hteb", "list",
]  # fmt: skip

SECTIONS = {
    "gen": ["Source", "Generation", "Sampling", "Backend", "Output", "Plan", "General"],
    "validate": ["Check", "Meaning check", "Judge", "Judge backend", "General"],
    "evaluate": ["Source", "Encoder", "Scoring", "Output", "General"],
    "probe": ["Encoder", "Probe", "Output", "General"],
    "publish": ["Release", "Card and metadata", "General"],
}


def test_the_commands_are_listed_in_the_workflows_order(invoke):
    result = invoke("--help")
    assert result.exit_code == 0
    listed = result.stdout.split("\nCommands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listed] == ORDER


def test_every_command_defined_is_in_the_declared_list():
    """A command module's command that COMMANDS leaves out would never be offered."""
    import shiftbench.cli.commands as package

    defined = set()
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        defined |= {v for v in vars(module).values() if isinstance(v, click.Command)}
    groups = [c for c in defined if isinstance(c, click.Group)]
    subcommands = {sub for group in groups for sub in group.commands.values()}
    missing = sorted(c.name or "" for c in defined - subcommands - set(shiftbench.cli.COMMANDS))
    assert missing == []
    assert list(cli.commands) == ORDER


def shown_sections(text: str) -> dict[str, list[str]]:
    """Each '<title> options:' heading of a help text with the option lines under it."""
    found: dict[str, list[str]] = {}
    rows: list[str] = []
    for line in text.splitlines():
        heading = re.fullmatch(r"(\S.*) options:", line)
        if heading:
            rows = found.setdefault(heading.group(1), [])
        elif found and re.match(r"  -", line):  # an option's own line, not its help's
            rows.append(line.strip())
    return found


@pytest.mark.parametrize("name", list(SECTIONS))
def test_a_stage_commands_options_are_shown_by_section_every_one_of_them(name, invoke):
    result = invoke(name, "--help")
    assert result.exit_code == 0
    command = cli.commands[name]
    ctx = command.make_context(name, [], resilient_parsing=True)
    records = [
        p.get_help_record(ctx) for p in command.get_params(ctx) if isinstance(p, click.Option)
    ]
    sections = shown_sections(result.stdout)
    assert list(sections) == SECTIONS[name]
    shown = [row for rows in sections.values() for row in rows]
    # each option once, and no line that is not one of the command's options
    assert sorted(row.split("  ")[0] for row in shown) == sorted(term for term, _ in records)
    # each option's help whole, as click wraps it (wrapping adds only whitespace)
    squeezed = "".join(result.stdout.split())
    for term, help_text in records:
        assert "".join(f"{term}{help_text}".split()) in squeezed, term


def test_an_option_no_section_names_is_still_shown():
    from shiftbench.cli.commands.sections import SectionedCommand

    command = SectionedCommand(
        "demo",
        params=[
            click.Option(["--kept"], help="In a section."),
            click.Option(["--new"], help="New."),
        ],
        sections={"Main": ("kept",)},
    )
    ctx = command.make_context("demo", [])
    assert [(h, [t for t, _ in rows]) for h, rows in command.option_sections(ctx)] == [
        ("Main options", ["--kept TEXT"]),
        ("Other options", ["--new TEXT"]),
        ("General options", ["--help"]),
    ]


def test_the_sections_name_only_options_the_command_has():
    for name in SECTIONS:
        command = cli.commands[name]
        declared = [n for names in command.sections.values() for n in names]
        options = {p.name for p in command.params if isinstance(p, click.Option)}
        assert len(declared) == len(set(declared)), name
        assert set(declared) == options - {"quiet", "verbose"}, name
