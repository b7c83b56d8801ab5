"""The tracked files of the checkout, as `pip install .` should package them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Tracked but not the package: the folders beside it, and the project's own files at the root.
NOT_PACKAGED_FOLDERS = ("tests/", "bench/", "docs/", ".ci/")


def tracked_files() -> list[str]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.fail("tests/real/test_package.py compares the wheel with a git checkout's files")
    return [name for name in listed.decode().split("\0") if name]
