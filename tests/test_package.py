"""What `pip install .` installs: the shiftbench package only, with its data files."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_holds_only_the_shiftbench_package(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("shiftbench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"shiftbench"}
    for stage in ("gen", "validate", "evaluate", "cards", "human_eval"):
        assert f"shiftbench/{stage}/__init__.py" in names
    assert "shiftbench/prompts/paraphrase.txt" in names
    assert "shiftbench/sample/data/test.jsonl" in names
    assert "shiftbench/sample/README.md" in names
    assert not [n for n in names if "/tests/" in n or n.startswith("shiftbench/bench/")]
