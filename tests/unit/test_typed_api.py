"""The public API is typed for its users: `py.typed` marks the package, and the root's
`if TYPE_CHECKING:` imports give a user's mypy every lazily loaded name's real type
instead of Any."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import shiftbench

# a user's mypy, less the time of reading numpy, torch and the rest: only shiftbench's own
# modules are followed
CONFIG = """\
[mypy]
follow_imports = skip
ignore_missing_imports = true
[mypy-shiftbench.*]
follow_imports = silent
"""


def test_a_users_mypy_sees_each_public_names_real_type(tmp_path: Path) -> None:
    """Each `shiftbench.NAME` reveals the type of NAME where it is defined (as the root's
    `__getattr__` serves it), found as an installed package (PEP 561), not Any."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "shiftbench").symlink_to(Path(shiftbench.__file__).parent)
    names = sorted(shiftbench._API)
    lines = ["import shiftbench"]
    for name in names:
        lines += [
            f"from {shiftbench._API[name]} import {name} as _{name}",
            f"reveal_type(shiftbench.{name})",
            f"reveal_type(_{name})",
        ]
    (tmp_path / "user.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "mypy.ini").write_text(CONFIG, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), "user.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(site)},
    )  # fmt: skip
    revealed = re.findall(r'Revealed type is "(.*)"', done.stdout)
    assert len(revealed) == 2 * len(names), done.stdout + done.stderr
    public, defined = revealed[::2], revealed[1::2]
    assert "Any" not in public
    assert dict(zip(names, public, strict=True)) == dict(zip(names, defined, strict=True))
    generate = dict(zip(names, public, strict=True))["generate"]
    assert generate.startswith("def (source: shiftbench.core.data.sources.Source"), generate
    assert generate.endswith("-> shiftbench.gen.api.GenResult"), generate


def test_the_type_only_imports_are_the_names_getattr_serves() -> None:
    tree = ast.parse(Path(shiftbench.__file__).read_text(encoding="utf-8"))
    (block,) = [
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    imported = {
        alias.asname or alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == shiftbench._API
