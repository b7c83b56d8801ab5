"""The documentation: its generated parts are current, README.md and the getting-started
page show the same commands, every public name has a reference entry, and no page names
a path of the machine it was written on."""

from __future__ import annotations

import re
from pathlib import Path

from support.files import fenced_after

import shiftbench
from shiftbench.cli.clidoc import SPEC_END, SPEC_START, section, spec_reference

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"


def pages() -> list[Path]:
    return [README, ROOT / "mkdocs.yml", *sorted(DOCS.rglob("*.md"))]


def test_the_spec_reference_is_the_schema():
    """docs/reference/spec.md's key tables are what the schema gives (regenerate them with
    `python -m shiftbench.cli.clidoc --write`)."""
    page = (DOCS / "reference" / "spec.md").read_text(encoding="utf-8")
    assert section(page, SPEC_START, SPEC_END) == spec_reference()


def test_the_getting_started_page_shows_the_readmes_command_and_example():
    readme = README.read_text(encoding="utf-8")
    page = (DOCS / "getting-started.md").read_text(encoding="utf-8")
    for marker in (
        "<!-- main-command -->",
        "<!-- main-output -->",
        "<!-- python-example -->",
        "<!-- python-output -->",
    ):
        assert fenced_after(readme, marker) in page, marker


def test_the_test_command_is_in_the_development_page():
    readme = README.read_text(encoding="utf-8")
    page = (DOCS / "development.md").read_text(encoding="utf-8")
    assert fenced_after(readme, "<!-- test-command -->") in page


def test_every_public_name_has_a_python_reference_entry():
    page = (DOCS / "reference" / "python.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\s+- (\w+)$", page, re.M))  # a module's members
    listed |= set(re.findall(r"^::: shiftbench(?:\.\w+)*\.([A-Z]\w*)$", page, re.M))  # alone
    missing = sorted(set(shiftbench.__all__) - {"__version__"} - listed)
    assert not missing, f"docs/reference/python.md lists no {missing}"


def test_the_readme_links_to_pages_that_exist():
    readme = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    assert links
    for link in links:
        assert (ROOT / link).is_file(), link


def test_no_page_names_a_path_of_the_machine_it_was_written_on():
    machine = re.compile(r"/work/|/tmp/|site-packages|/root/|/home/(?!me/)")
    for page in pages():
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not machine.search(line), f"{page.relative_to(ROOT)}:{n}: {line}"
