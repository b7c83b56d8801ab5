"""Local datasets laid out as Hugging Face Hub repositories: the YAML header of their
README, its `configs:` (which files make each config's splits), a content digest standing
in for a revision, and loading one config with `datasets`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml

from shiftbench.core.data.jsonfiles import read_jsonl, wrong_unicode
from shiftbench.core.data.writes import scratch as scratch_folder
from shiftbench.errors import InputError, exception_chain, write_fault


def card_metadata(folder: Path) -> Any:
    """The YAML header of a Hub-layout folder's README (None when it has none)."""
    readme = folder / "README.md"
    if not readme.is_file():
        raise InputError(
            f"{folder} has no README.md; a local source is a folder laid out as a "
            "Hub dataset repository (README.md with configs:)"
        )
    text = readme.read_text(encoding="utf-8")
    meta: Any = None
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            try:
                meta = yaml.safe_load(text[3:end])
            except yaml.YAMLError as exc:
                raise InputError(f"{readme}: its YAML header does not parse ({exc})") from None
    return meta


def read_card_configs(folder: Path) -> dict[str, dict[str, str]]:
    """Read the `configs:` of a Hub-layout folder's README as {config: {split: path}}."""
    readme = folder / "README.md"
    meta = card_metadata(folder)
    configs = meta.get("configs") if isinstance(meta, dict) else None
    if not isinstance(configs, list) or not configs:
        raise InputError(f"{readme} has no configs: list in its YAML header")
    out: dict[str, dict[str, str]] = {}
    for entry in configs:
        name = entry.get("config_name", "default")
        files = entry.get("data_files", [])
        # Hub cards write data_files as one path, a list of paths (both: split "train"),
        # or a list of {split, path} entries.
        if isinstance(files, str) or (
            isinstance(files, list) and files and not isinstance(files[0], dict)
        ):
            files = [{"split": "train", "path": files}]
        out[name] = {f["split"]: f["path"] for f in files}
    return out


def folder_digest(folder: Path) -> str:
    """A content hash of a local dataset folder, standing in for a Hub revision."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return "sha256:" + digest.hexdigest()[:16]


def load_local(folder: Path, config: str, plain: bool = True) -> dict[str, Any]:
    """One config of a Hub-layout folder as {split: rows}: `Rows` for plain JSON Lines
    (read without `datasets`, shiftbench.core.data.rows) unless `plain` is False, else
    datasets' own `Dataset`s."""
    configs = read_card_configs(folder)
    if config not in configs:
        raise InputError(f"unknown config {config!r} in {folder}; available: {', '.join(configs)}")
    _refuse_empty(folder, config, configs[config])
    if plain:
        from shiftbench.core.data.rows import read_plain

        read = read_plain(folder, card_metadata(folder), config)
        if read is not None:
            return dict(read)
    import datasets

    datasets.disable_progress_bars()
    # A throw-away cache: datasets' shared cache can hand back another folder's rows for a
    # local folder of the same name, and a local copy gains nothing from being cached.
    with scratch_folder("load") as scratch:
        level = datasets.logging.get_verbosity()
        # datasets logs a bad line's pyarrow error before raising; the error below says it
        datasets.logging.set_verbosity(datasets.logging.CRITICAL)
        try:
            loaded = datasets.load_dataset(
                str(folder), config, cache_dir=scratch, keep_in_memory=True
            )
        except (FileNotFoundError, ValueError) as exc:
            _refuse_other_unicode(folder, config, exc)
            raise InputError(f"cannot load {folder}[{config}]: {exc}") from None
        except StopIteration:  # datasets' JSON reader finds no first row to read
            raise InputError(f"cannot load {folder}[{config}]: a data file holds no rows") from None
        except datasets.exceptions.DatasetGenerationError as exc:
            fault = write_fault(exc)  # a scratch file past a limit says nothing of the data
            if fault is not None:
                raise fault from None
            _refuse_other_unicode(folder, config, exc)
            # pyarrow's message names neither file nor line: find the line it stopped at
            for path in sorted(folder.rglob("*.jsonl")):
                read_jsonl(path)
            first = str(exc.__cause__ or exc).splitlines()[0]
            raise InputError(f"cannot load {folder}[{config}]: {first}") from None
        finally:
            datasets.logging.set_verbosity(level)
    return dict(loaded)


def _refuse_empty(folder: Path, config: str, files: dict[str, Any]) -> None:
    """A data file of the config that holds no rows (empty, or blank lines only) is named:
    datasets would fail on it with no word of which file it is."""
    for split, listed in files.items():
        for name in listed if isinstance(listed, list) else [listed]:
            path = folder / str(name)
            if not path.is_file():  # a pattern, or missing: datasets says which
                continue
            size = path.stat().st_size
            if size == 0 or (size < 4096 and not path.read_bytes().strip()):
                raise InputError(
                    f"{path}: holds no rows; the {split} split of {folder}[{config}] needs at "
                    "least one"
                )


def _refuse_other_unicode(folder: Path, config: str, exc: BaseException) -> None:
    """A load that failed on bytes that are not UTF-8: a data file of the config in UTF-16
    or UTF-32 is named, with what it is."""
    if not any(isinstance(e, UnicodeDecodeError) for e in exception_chain(exc)):
        return
    for split in read_card_configs(folder)[config]:
        for path in split_files(folder, config, split):
            with open(path, "rb") as handle:
                other = wrong_unicode(path, handle.read(4))
            if other is not None:
                raise other from None


def split_files(folder: Path, config: str, split: str) -> list[Path]:
    """The files of one split of a config, in the order `datasets` reads them: each path
    or pattern the card names, patterns expanded and sorted; [] when the card names none."""
    named = read_card_configs(folder).get(config, {}).get(split)
    patterns = [named] if isinstance(named, str) else list(named or [])
    out: list[Path] = []
    for pattern in patterns:
        out += sorted(p for p in folder.glob(str(pattern)) if p.is_file())
    return out


def row_line(folder: Path, config: str, split: str, index: int) -> tuple[str, Any] | None:
    """Where row `index` of a split comes from when its files are JSON Lines: `FILE:LINE`
    and the row as written (None when the line is not a JSON object); None for another
    format, or an index past the files' rows."""
    import json

    files = split_files(folder, config, split)
    if not files or any(f.suffix not in (".jsonl", ".json") for f in files):
        return None
    seen = 0
    for path in files:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                if not raw.strip():  # datasets skips a blank line: it is no row
                    continue
                if seen == index:
                    try:
                        row = json.loads(raw)
                    except ValueError:
                        row = None
                    return f"{path}:{number}", row if isinstance(row, dict) else None
                seen += 1
    return None


def single_config(folder: Path) -> str:
    configs = read_card_configs(folder)
    return "default" if "default" in configs else next(iter(configs))
