"""Every command and option explains itself; --version and -h work."""

from __future__ import annotations

import click

from shiftbench import __version__
from shiftbench.cli import cli


def all_commands(group: click.Group, prefix: str = "shiftbench"):
    for name, command in group.commands.items():
        yield f"{prefix} {name}", command
        if isinstance(command, click.Group):
            yield from all_commands(command, f"{prefix} {name}")


def test_every_command_and_option_has_help():
    commands = list(all_commands(cli))
    assert {name for name, _ in commands} >= {"shiftbench gen", "shiftbench evaluate"}
    for name, command in commands:
        assert command.help, f"{name} has no help text"
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{name} {param.opts[0]} has no help text"


def test_version_and_short_help(invoke):
    result = invoke("--version")
    assert (result.exit_code, result.stdout) == (0, f"shiftbench, version {__version__}\n")
    result = invoke("gen", "-h")
    assert result.exit_code == 0
    assert "Usage: shiftbench gen [OPTIONS] SOURCE" in result.stdout


def test_the_cli_reference_is_every_commands_help():
    """docs/reference/cli.md's CLI reference is what --help prints (regenerate it with
    `python -m shiftbench.cli.clidoc --write`)."""
    from pathlib import Path

    from shiftbench.cli.clidoc import reference, section

    page = (Path(__file__).parents[2] / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert section(page) == reference()
    for name, _ in all_commands(cli):
        assert f"<code>{name}</code>" in page, name


def test_every_command_has_help_for_its_arguments_and_a_usage_line(invoke):
    for name, command in all_commands(cli):
        result = invoke(*name.split()[1:], "--help")
        assert result.exit_code == 0, name
        assert result.stdout.startswith(f"Usage: {name} "), name
        for param in command.params:
            if isinstance(param, click.Argument):
                metavar = (param.metavar or param.name or "").upper()
                assert metavar.split()[0].strip("[].") in (command.help or ""), (name, metavar)
