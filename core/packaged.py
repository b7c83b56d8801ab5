"""Models that PyPI packages ship as files, so that Hub names also work offline."""

from __future__ import annotations

import importlib
import importlib.util
from importlib.metadata import PackageNotFoundError, version
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


def installed_version(dist: str, module: str) -> str:
    """The version of an installed library as its module's `__version__` gives it, read
    from the distribution's metadata, so that naming a library (in a plan, a dry run) does
    not import it (llama_cpp takes 0.2 s, torch a second); the module is imported only when
    no metadata names it."""
    try:
        return version(dist)
    except PackageNotFoundError:
        return str(importlib.import_module(module).__version__)


def package_pin(package: str) -> str:
    """`dist-name==version` for an import name, for provenance."""
    dist = package.replace("_", "-")
    return f"{dist}=={version(dist)}"
