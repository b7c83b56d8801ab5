"""One message channel: library code speaks through logging (core/messages.py) and never
prints; the command line's one handler puts a command's REPORT lines on stdout and every
other record on stderr."""

from __future__ import annotations

import ast
import logging

import pytest
from support.layers import PACKAGE, package_files

import shiftbench
from shiftbench.core.messages import REPORT
from shiftbench.validate.api import TABLE_HEADER, table_printer

VALIDATE = ("--langid", "langdetect", "--meaning-encoder", "none")


def test_library_code_never_prints_nor_takes_a_printer():
    found = []
    for path in package_files():
        where = path.relative_to(PACKAGE)
        if where.parts[0] in {"cli", "__main__.py", "setup.py"}:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "print"
            ):
                found.append(f"{where}:{node.lineno} calls print")
            if isinstance(node, ast.arg) and node.arg in {"say", "echo", "tell"}:
                found.append(f"{where}:{node.lineno} takes a printer ({node.arg})")
    assert found == []


def test_report_lines_go_to_stdout_and_steps_to_stderr_with_v(status_run, invoke):
    quiet = invoke("validate", status_run, *VALIDATE)
    assert quiet.exit_code == 0
    assert quiet.stdout.splitlines()[0] == TABLE_HEADER
    assert quiet.stderr == ""
    loud = invoke("-v", "validate", status_run, *VALIDATE)
    assert loud.stdout == quiet.stdout
    assert f"validate {status_run} with 0 measure(s)" in loud.stderr.splitlines()
    assert TABLE_HEADER not in loud.stderr


@pytest.fixture
def heard():
    """The REPORT lines that reach the "shiftbench" logger, as a Python caller's handler
    sees them."""

    class Lines(logging.Handler):
        def __init__(self) -> None:
            super().__init__(REPORT)
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    logger = logging.getLogger("shiftbench")
    level = logger.level
    handler = Lines()
    logger.addHandler(handler)
    logger.setLevel(REPORT)
    yield handler.lines
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_a_python_caller_hears_the_report_through_logging(status_run, heard):
    settings = shiftbench.ValidateSettings(langid="langdetect")
    shiftbench.validate_runs([status_run], settings, on_config=table_printer())
    assert heard[0] == TABLE_HEADER
    assert heard[1].startswith(status_run.name)
