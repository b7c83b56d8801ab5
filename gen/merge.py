"""Put the shards of a sharded gen run back together into one run folder.

The result is the folder a single-machine run would have written, byte for byte: rows are
deterministic per row, so only the per-config counts need recomputing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, cast

from shiftbench.core.data.jsonfiles import read_jsonl
from shiftbench.core.data.runfolder import (
    ConfigData,
    is_run_folder,
    read_meta,
    tally_status,
    write_run,
)
from shiftbench.core.messages import differences
from shiftbench.core.records import ConfigRecord, DataRow, RunExtras, RunMeta
from shiftbench.errors import InputError
from shiftbench.gen.configs import recorded_settings

DRAWN: tuple[Literal["target_languages", "pivot_languages"], ...] = (
    "target_languages",
    "pivot_languages",
)


def merge_shards(folders: list[Path], output: Path) -> list[str]:
    """Merge shard run folders into `output` (which must not exist). Returns config names."""
    metas = [_shard_meta(folder) for folder in folders]
    count = metas[0]["shard"]["count"]
    indexes = sorted(m["shard"]["index"] for m in metas)
    if any(m["shard"]["count"] != count for m in metas) or indexes != list(range(count)):
        have = ", ".join(str(i) for i in indexes)
        raise InputError(f"a merge needs shards 0 to {count - 1} once each; given: {have}")
    first = metas[0]
    for folder, meta in zip(folders[1:], metas[1:], strict=True):
        if meta["source"] != first["source"] or _settings(meta) != _settings(first):
            raise InputError(
                f"{folder} was made with other settings than {folders[0]} "
                f"({_what_differs(first, meta, folders[0], folder)})"
            )
    if output.exists() and any(output.iterdir()):
        raise InputError(f"output {output} already exists; a merge writes a new folder")
    configs = [_merge_config(name, info, folders, metas) for name, info in first["configs"].items()]
    held = cast(dict[str, Any], first)
    top: RunExtras = {}
    if "rewrite" in held:
        top["rewrite"] = held["rewrite"]
    if "protocol" in held:
        top["protocol"] = held["protocol"]
    write_run(output, first["source"], configs, None, top)
    return [c.name for c in configs]


def _shard_meta(folder: Path) -> RunMeta:
    if not is_run_folder(folder):
        raise InputError(f"{folder} is not a shiftbench run folder")
    meta = read_meta(folder)
    if "shard" not in meta:
        raise InputError(f"{folder} is not a shard (it was not made with --shard)")
    return meta


def _settings(meta: RunMeta) -> tuple[Any, dict[str, Any]]:
    """What must agree between shards: the parts rewritten and every config's settings."""
    return meta.get("rewrite"), {name: _settings_of(info) for name, info in meta["configs"].items()}


def _what_differs(first: RunMeta, other: RunMeta, here: Path, there: Path) -> str:
    """How `other`'s settings differ from `first`'s, as `_settings` compares them: the
    source, the parts rewritten, the configs each holds (`here` is first's folder, `there`
    other's), and each config's settings."""
    if first["source"] != other["source"]:
        return "source " + differences(first["source"], other["source"])
    if first.get("rewrite") != other.get("rewrite"):
        return differences({"rewrite": first.get("rewrite")}, {"rewrite": other.get("rewrite")})
    mine, theirs = first["configs"], other["configs"]
    if set(mine) != set(theirs):
        gained = [n for n in theirs if n not in mine]
        lost = [n for n in mine if n not in theirs]
        return ", ".join(
            [f"config {n} only in {there}" for n in gained]
            + [f"config {n} only in {here}" for n in lost]
        )
    for name, info in mine.items():
        theirs_info = theirs[name]
        if _settings_of(info) != _settings_of(theirs_info):
            changed = differences(
                {"kind": info["kind"], "splits": sorted(info["rows"]), **recorded_settings(info)},
                {"kind": theirs_info["kind"], "splits": sorted(theirs_info["rows"]),
                 **recorded_settings(theirs_info)},
            )  # fmt: skip
            return f"config {name}: " + (
                changed
                or differences(
                    {"settings_sha256": info.get("settings_sha256")},
                    {"settings_sha256": theirs_info.get("settings_sha256")},
                )
            )
    return "settings"


def _settings_of(info: ConfigRecord) -> tuple[Any, ...]:
    return (info["kind"], info.get("settings_sha256"), sorted(info["rows"]))


def _merge_config(
    name: str, info: ConfigRecord, folders: list[Path], metas: list[RunMeta]
) -> ConfigData:
    splits: dict[str, list[DataRow]] = {}
    for split in info["rows"]:
        rows = []
        for folder in folders:
            rows += read_jsonl(folder / name / f"{split}.jsonl", required=("row_id",))
        rows.sort(key=lambda r: r["row_id"])
        if [r["row_id"] for r in rows] != list(range(len(rows))):
            raise InputError(f"the shards' rows of {name}/{split} do not add up to one run")
        splits[split] = rows
    merged = ConfigRecord(**info)
    merged["rows"] = {split: len(rows) for split, rows in splits.items()}
    if "status_counts" in info:
        merged["status_counts"] = {split: tally_status(rows) for split, rows in splits.items()}
    for key in DRAWN:
        if key in info:
            merged[key] = sorted({c for m in metas for c in m["configs"][name].get(key, [])})
    return ConfigData(name, merged, splits)
