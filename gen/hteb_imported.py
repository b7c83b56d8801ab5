"""What an import of HTEB's files wrote, and the language gen records for a subset: shared
by the import of every task type (gen/hteb.py, gen/hteb_retrieval.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shiftbench.core.data.source_languages import field_languages
from shiftbench.core.records import SourceRecord


@dataclass(frozen=True)
class Imported:
    """What an import wrote."""

    output: Path
    dataset: str
    generator: str
    configs: tuple[str, ...]

    def summary(self) -> str:
        return (
            f"imported HTEB's {self.dataset} rewrites by {self.generator} as "
            f"{', '.join(self.configs)} to {self.output}"
        )


def subset_language(recorded: SourceRecord, subset: str) -> str | None:
    """The ISO 639-1 code of a subset's language, as gen records it."""
    found = field_languages((recorded.get("languages") or {}).get(subset) or [], ("text",))[0]
    return found.code if found else None
