"""A release: the exact files a version of a run folder consists of, and their manifest.

A release is built in memory from a run folder: every file of the folder (hidden staging
leftovers aside), the card rendered for this version in place of `README.md`, the summaries
of the human-eval reports it cites, and `shiftbench-release.json`, the manifest that lists
every other file with its size and sha256. Nothing in the run folder changes.

Before anything is published the folder is checked: its metadata, the data files every
config names, and that `load_dataset` loads every config with the card about to be
uploaded and finds the row counts the metadata records.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shiftbench import __version__
from shiftbench.cards import card as cards
from shiftbench.errors import InputError
from shiftbench.hub import MANIFEST, folder_files, sha256_file
from shiftbench.runfolder import FORMAT_VERSION, META_FILE, card_rows, read_meta
from shiftbench.runfolder import render_card as minimal_card


@dataclass
class Release:
    """What one version uploads: paths in the repo mapped to a local file or to bytes."""

    folder: Path
    tag: str | None
    files: dict[str, Path | bytes] = field(default_factory=dict)

    def size(self, path: str) -> int:
        item = self.files[path]
        return len(item) if isinstance(item, bytes) else item.stat().st_size

    def sha256(self, path: str) -> str:
        item = self.files[path]
        if isinstance(item, bytes):
            return hashlib.sha256(item).hexdigest()
        return sha256_file(item)

    def listing(self) -> list[dict[str, Any]]:
        """Every file but the manifest, by path: size and sha256."""
        return [
            {"path": p, "size": self.size(p), "sha256": self.sha256(p)}
            for p in sorted(self.files)
            if p != MANIFEST
        ]


def check_folder(folder: Path) -> dict[str, Any]:
    """The run folder's metadata, once its layout is what the metadata says."""
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder")
    meta = read_meta(folder)
    if meta.get("format") != FORMAT_VERSION:
        raise InputError(
            f"{folder / META_FILE} has format {meta.get('format')!r}; this shiftbench "
            f"reads format {FORMAT_VERSION}"
        )
    for key in ("source", "configs"):
        if not isinstance(meta.get(key), dict) or not meta[key]:
            raise InputError(f"{folder / META_FILE} has no {key!r}")
    if meta.get("shard"):
        raise InputError(
            f"{folder} is one shard of a run; merge the shards (shiftbench merge) and "
            "publish the merged folder"
        )
    for name, info in meta["configs"].items():
        for split in info.get("rows", {}):
            if not (folder / name / f"{split}.jsonl").is_file():
                raise InputError(
                    f"{folder} lacks {name}/{split}.jsonl, which {META_FILE} lists; "
                    "was the folder edited by hand?"
                )
    return meta


def infos_by_loading(
    folder: Path, card_text: str, meta: dict[str, Any], extra: dict[str, Path | bytes]
) -> dict[str, Any]:
    """Load every config with `load_dataset` as the Hub would see the release.

    The release's files are linked into a scratch folder with `card_text` as README.md, so
    what is loaded is exactly what would be uploaded. Returns each config's DatasetInfo.
    """
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    scratch = Path(tempfile.mkdtemp(prefix="shiftbench-release-"))
    try:
        view = scratch / "repo"
        files: dict[str, Path | bytes] = {**folder_files(folder), **extra}
        files["README.md"] = card_text.encode("utf-8")  # never through a link to the folder
        for path, item in files.items():
            target = view / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(item, bytes):
                target.write_bytes(item)
            else:
                os.symlink(item.resolve(), target)
        infos = {}
        for name, info in meta["configs"].items():
            loaded = None
            # a ranking config's corpus and judgements load as card configs of their own
            for card, rows in card_rows(name, info).items():
                table = _load(datasets, view, card, scratch)
                counts = {split: table[split].num_rows for split in table}
                if counts != rows:
                    raise InputError(
                        f"config {card} loads with rows {counts} but {META_FILE} records "
                        f"{rows}; regenerate the config or restore its files"
                    )
                loaded = table if card == name else loaded
            assert loaded is not None
            first = next(iter(loaded.values()))
            missing = [c for c in expected_columns(meta, info) if c not in first.column_names]
            if missing:
                raise InputError(
                    f"config {name} lacks the columns {', '.join(missing)}; it is not what "
                    "shiftbench gen writes"
                )
            infos[name] = first.info
        return infos
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _load(datasets: Any, view: Path, name: str, scratch: Path) -> Any:
    try:
        return datasets.load_dataset(
            str(view), name, cache_dir=str(scratch / "cache"), download_mode="force_redownload"
        )
    except Exception as exc:  # datasets raises many types; all mean "does not load"
        raise InputError(f"config {name} does not load with load_dataset: {exc}") from None


def expected_columns(meta: dict[str, Any], info: dict[str, Any]) -> list[str]:
    """The columns every row of a config must have: the task's, and a variant's own."""
    from shiftbench.sources import TASK_SCHEMAS

    source = meta["source"]
    schema = TASK_SCHEMAS.get(source["task_type"])
    columns = list(schema.required) if schema else []
    if info.get("kind") == "transform":
        columns += ["row_id", "status", "attempt"]
        columns += [f"original_{f}" for f in source.get("text_fields", [])]
    return columns


def manifest(release: Release, meta: dict[str, Any]) -> bytes:
    """The release manifest: deterministic, so equal content gives equal bytes."""
    source = meta["source"]
    doc = {
        "format": 1,
        "version": release.tag,
        "shiftbench_version": __version__,
        "source": {
            "name": source.get("name"),
            "task_type": source.get("task_type"),
            "dataset": cards.source_dataset(source),
            "revision": source.get("revision"),
        },
        "configs": {name: info.get("rows", {}) for name, info in meta["configs"].items()},
        "files": release.listing(),
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def build(
    folder: Path,
    repo: str | None,
    tag: str | None,
    human_dirs: tuple[Path, ...] = (),
    license_id: str | None = None,
) -> tuple[Release, dict[str, Any], str]:
    """Check the folder and assemble its release: files, card and manifest.

    Returns the release, the folder's metadata and the card text.
    """
    meta = check_folder(folder)
    human = cards.human_reports(human_dirs)
    extra: dict[str, Path | bytes] = {}
    for entry in human:
        summary = json.dumps(cards.human_summary(entry), indent=2, ensure_ascii=False) + "\n"
        extra[f"human_eval/{entry['name']}.json"] = summary.encode("utf-8")
    # Load once with the plain card for the features, then with the full card to prove
    # load_dataset accepts exactly what is published.
    infos = infos_by_loading(folder, minimal_card(meta), meta, extra)
    text = cards.render(
        folder, meta, infos=infos, repo=repo, tag=tag, human=human, license_id=license_id
    )
    infos_by_loading(folder, text, meta, extra)
    release = Release(folder, tag)
    release.files.update(folder_files(folder))
    release.files.update(extra)
    release.files["README.md"] = text.encode("utf-8")
    if tag is not None:
        release.files[MANIFEST] = manifest(release, meta)
    return release, meta, text
