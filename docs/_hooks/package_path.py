"""A mkdocs hook that lets mkdocstrings find the package from any checkout.

The repository root is the package `shiftbench` itself (pyproject's `package-dir`), so the
folder holding it is named after the checkout, not after the package, and mkdocstrings,
which looks for a `shiftbench/` folder on its search path, would not find it there. The
hook links a temporary `shiftbench` to the root and puts the link's folder first on that
path, so the API reference is read from the source being built, installed or not.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority


# before mkdocstrings' own on_config, which creates the Python handler with its paths
@event_priority(100)
def on_config(config: Any) -> Any:
    root = Path(config.config_file_path).resolve().parent
    holder = Path(tempfile.mkdtemp(prefix="shiftbench-docs-"))
    atexit.register(shutil.rmtree, holder, ignore_errors=True)
    (holder / "shiftbench").symlink_to(root, target_is_directory=True)
    handlers = config.plugins["mkdocstrings"].config.handlers
    python = handlers.setdefault("python", {})
    python["paths"] = [str(holder), *python.get("paths", [])]
    return config
