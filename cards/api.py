"""cards as a library: a run folder's dataset card, and frozen releases on the Hub.

>>> from shiftbench.cards.api import ReleaseSettings, publish_release, write_card
>>> write_card("runs/sample", ReleaseSettings(repo="org/sample-shift", version="1.0.0"))
>>> publish_release("runs/sample", ReleaseSettings(repo="org/sample-shift", version="1.0.0"))
"""

from __future__ import annotations

from pathlib import Path

from shiftbench.cards.settings import ReleaseSettings
from shiftbench.errors import InputError

__all__ = ["ReleaseSettings", "publish_release", "verify_release", "write_card"]


def write_card(
    run: str | Path, settings: ReleaseSettings | None = None, output: str | Path | None = None
) -> Path:
    """Write the dataset card of a run folder (every config is loaded first, with the
    builder load_dataset uses for its files) to `output`, by default RUN/README.md;
    returns where it went."""
    from shiftbench.cards.release import build
    from shiftbench.core.hub import check_repo, check_version

    s = settings or ReleaseSettings()
    tag = check_version(s.version) if s.version else None
    if s.repo:
        check_repo(s.repo)
    data_format = s.data_format or "jsonl"
    if output is None and data_format != "jsonl":
        raise InputError(
            f"a {data_format} card names data files the run folder does not hold; write "
            "it elsewhere with --output (publish converts the files)"
        )
    _, _, text = build(
        Path(run), s.repo, tag, s.human_dirs, s.license_id, data_format=data_format,
        results=s.results, rai=s.rai, date_published=s.date_published,
    )  # fmt: skip
    from shiftbench.core.data.writes import atomic_write_text

    target = Path(output) if output is not None else Path(run) / "README.md"
    atomic_write_text(target, text)  # a full disk leaves the old card, never a cut one
    return target


def publish_release(
    run: str | Path,
    settings: ReleaseSettings,
    *,
    dry_run: bool = False,
    quiet: bool = False,
) -> str:
    """Release a run folder to the Hub as the frozen version v`settings.version`. What was
    published and how to load it, or a dry run's plan, is reported line by line through
    logging (shiftbench.core.messages).

    Returns:
        "published", "unchanged" (the same content is published already) or "planned"
        (a dry run).

    Raises:
        InputError: No repo or version, a folder that is not a complete run, no token,
            or a version already published with other content.
        RuntimeFault: The Hub failed after retries; no tag was made.
    """
    from shiftbench.cards.publish import publish
    from shiftbench.core.hub import check_repo, check_version

    if not settings.repo or not settings.version:
        raise InputError("a release needs a repo (ORG/NAME) and a version (X.Y.Z)")
    tag = check_version(settings.version)
    check_repo(settings.repo)
    return publish(Path(run), settings.repo, tag, settings, dry_run=dry_run, quiet=quiet)


def verify_release(release: str, *, load: bool = True, quiet: bool = False) -> list[str]:
    """Download a published release (ORG/NAME@vX.Y.Z) and check it against its manifest;
    returns the problems found (none: it matches). What was checked is reported through
    logging (shiftbench.core.messages)."""
    from shiftbench.cards.publish import verify

    return verify(release, load=load, quiet=quiet)
