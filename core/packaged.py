"""Models that PyPI packages ship as files, so that Hub names also work offline."""

from __future__ import annotations

import importlib.util
from importlib.metadata import version
from pathlib import Path


def packaged_file(package: str, relative: str) -> Path | None:
    """The path of `relative` inside an installed package, without importing the package.

    Some of these packages import heavy or missing dependencies at import time; only their
    files are needed.
    """
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        return None
    path = Path(next(iter(found.submodule_search_locations))) / relative
    return path if path.exists() else None


def package_pin(package: str) -> str:
    """`dist-name==version` for an import name, for provenance."""
    dist = package.replace("_", "-")
    return f"{dist}=={version(dist)}"
