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
