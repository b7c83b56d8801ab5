"""What `pip install .` installs: the tracked package tree, file for file, and nothing else.

An editable install reads the source tree, so a module or data file the wheel lacks goes
unseen by every other test; this one builds the wheel as `pip install .` does (in an
isolated build environment, from a copy of the tracked files) and compares.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest
from support.package import NOT_PACKAGED_FOLDERS, ROOT, tracked_files

NOT_PACKAGED_FILES = {"setup.py", "pyproject.toml", "README.md", "mkdocs.yml", ".gitignore"}


def package_files(tracked: list[str]) -> set[str]:
    """The wheel's expected files: every tracked file of the package, under shiftbench/."""
    return {
        f"shiftbench/{name}"
        for name in tracked
        if not name.startswith(NOT_PACKAGED_FOLDERS) and name not in NOT_PACKAGED_FILES
    }


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The files of the wheel that `pip install .` builds from the tracked tree."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    for name in tracked_files():
        if (ROOT / name).is_file():  # a tracked file deleted in the work tree is not built
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base), str(source)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = base.glob("shiftbench-*.whl")
    return {
        name
        for name in zipfile.ZipFile(wheel).namelist()
        if not name.split("/")[0].endswith(".dist-info") and not name.endswith("/")
    }


def test_the_wheel_is_the_tracked_package_file_for_file(wheel_names: set[str]) -> None:
    tracked = [name for name in tracked_files() if (ROOT / name).is_file()]
    expected = package_files(tracked)
    missing, extra = sorted(expected - wheel_names), sorted(wheel_names - expected)
    assert not missing, f"the wheel lacks these tracked package files: {', '.join(missing)}"
    assert not extra, f"the wheel holds files the package does not track: {', '.join(extra)}"
    # every subpackage, the data files the code opens, and the command's entry point
    for name in (
        "shiftbench/llm/__init__.py",
        "shiftbench/llm/cache.py",
        "shiftbench/llm/backends/embedded.py",
        "shiftbench/prompts/paraphrase.txt",
        "shiftbench/validate/prompts/judge-quality.txt",
        "shiftbench/human_eval/form.html",
        "shiftbench/human_eval/schemes/similarity.json",
        "shiftbench/sample/data/test.jsonl",
        "shiftbench/markers.json",
        "shiftbench/py.typed",
    ):
        assert name in wheel_names
