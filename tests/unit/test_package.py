"""What `pip install .` installs: the tracked package tree, file for file, and nothing else.

An editable install reads the source tree, so a module or data file the wheel lacks goes
unseen by every other test; this one builds the wheel as `pip install .` does (in an
isolated build environment, from a copy of the tracked files) and compares.
"""

from __future__ import annotations

from pathlib import Path

from support.package import NOT_PACKAGED_FOLDERS, tracked_files


def test_every_package_folder_is_a_package() -> None:
    """A folder of modules without __init__.py would not be found, so none may exist."""
    tracked = tracked_files()
    folders = {
        str(Path(name).parent)
        for name in tracked
        if name.endswith(".py") and not name.startswith(NOT_PACKAGED_FOLDERS) and "/" in name
    }
    assert sorted(f for f in folders if f"{f}/__init__.py" not in tracked) == []
