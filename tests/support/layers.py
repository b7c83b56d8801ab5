"""The package's modules as the layer tests walk them."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2]
SKIP = {"tests", "bench", "build", "docs", "sample", "prompts"}


def package_files() -> list[Path]:
    def inside(f: Path) -> bool:
        folders = f.relative_to(PACKAGE).parts[:-1]
        return not any(p in SKIP or p.startswith(".") or p.endswith(".egg-info") for p in folders)

    return sorted(f for f in PACKAGE.rglob("*.py") if inside(f))
