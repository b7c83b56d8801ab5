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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shiftbench import __version__
from shiftbench.cards import card as cards
from shiftbench.cards import croissant, facts, sections
from shiftbench.cards import results as evaluated
from shiftbench.cards.results import ModelScores
from shiftbench.core.data.parts import context_name
from shiftbench.core.data.runcard import card_configs, card_rows, table_config
from shiftbench.core.data.runfolder import (
    DATA_FORMATS,
    FORMAT_VERSION,
    META_FILE,
    read_config_split,
    read_meta,
    read_split,
    split_file,
)
from shiftbench.core.data.sources import TASK_SCHEMAS
from shiftbench.core.data.writes import scratch as scratch_folder
from shiftbench.core.hub import MANIFEST, folder_files, sha256_file
from shiftbench.core.records import ConfigRecord, RunMeta
from shiftbench.errors import InputError, write_fault


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


def check_folder(folder: Path) -> RunMeta:
    """The run folder's metadata, once its layout is what the metadata says and every
    row reads as evaluate reads it."""
    meta = check_layout(folder)
    # every row as evaluate reads it: a release never freezes rows evaluate refuses
    for name, info in meta["configs"].items():
        for split in info["rows"]:
            read_config_split(folder, meta, name, split)
    return meta


def check_layout(folder: Path) -> RunMeta:
    """The run folder's metadata, once it is one whole run of this format (its rows
    unread)."""
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
    return meta


def infos_by_loading(
    files: dict[str, Path | bytes], meta: RunMeta, data_format: str
) -> dict[str, Any]:
    """Load every config of the release once, with the builder `load_dataset` uses for its
    data files (datasets' packaged Parquet or JSON builder), and check its row counts and
    columns. Returns each config's DatasetInfo: the features, splits and sizes the card
    records.

    The release's `files` are linked into a scratch folder, so what is loaded is exactly
    what would be uploaded. Parquet configs whose first files share one Arrow schema are
    loaded by one builder, a split per config split (see _load_parquet).
    """
    import datasets

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    with scratch_folder("release") as scratch:
        view = scratch / "repo"
        for path, item in files.items():
            target = view / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(item, bytes):
                target.write_bytes(item)
            else:
                os.symlink(item.resolve(), target)
        splits_of: dict[str, list[tuple[str, str]]] = {}  # card config -> (split, file)
        for name, info in meta["configs"].items():
            for split in info["rows"]:
                kind, _, of = context_name(split).rpartition("/")
                card = table_config(name, kind, info.get("subset")) if kind else name
                splits_of.setdefault(card, []).append((of, f"{name}/{split}.{data_format}"))
        # a ranking config's corpus and judgements load as card configs of their own
        wanted = {
            card: rows for name, info in meta["configs"].items()
            for card, rows in card_rows(name, info).items()
        }  # fmt: skip
        if data_format == "parquet":
            loaded = _load_parquet(view, {card: splits_of[card] for card in wanted}, scratch)
        else:
            loaded = {card: _load(view, card, splits_of[card], "json", scratch) for card in wanted}
        for card, rows in wanted.items():
            counts = {split: s.num_examples for split, s in loaded[card].splits.items()}
            if counts != rows:
                raise InputError(
                    f"config {card} loads with rows {counts} but {META_FILE} records "
                    f"{rows}; regenerate the config or restore its files"
                )
        infos = {}
        for name, info in meta["configs"].items():
            infos[name] = loaded[name]
            missing = [c for c in expected_columns(meta, info) if c not in infos[name].features]
            if missing:
                raise InputError(
                    f"config {name} lacks the columns {', '.join(missing)}; it is not what "
                    "shiftbench gen writes"
                )
        return infos


def _load(
    view: Path, name: str, splits: list[tuple[str, str]], builder_name: str, scratch: Path
) -> Any:
    """One card config loaded alone by datasets' packaged `json` or `parquet` builder, as
    `load_dataset` builds it; its DatasetInfo."""
    from datasets.packaged_modules.json.json import Json
    from datasets.packaged_modules.parquet.parquet import Parquet

    try:
        builder = (Json if builder_name == "json" else Parquet)(
            cache_dir=str(scratch / "cache"), config_name=name, dataset_name=view.name,
            hash="release", data_files={split: [str(view / path)] for split, path in splits},
        )  # fmt: skip
        builder.download_and_prepare(download_mode="force_redownload")
    except Exception as exc:  # datasets raises many types; all mean "does not load"
        fault = write_fault(exc)  # ...but a scratch file past a limit says nothing of the data
        if fault is not None:
            raise fault from None
        raise InputError(f"config {name} does not load with load_dataset: {exc}") from None
    return builder.info


def _load_parquet(
    view: Path, configs: dict[str, list[tuple[str, str]]], scratch: Path
) -> dict[str, Any]:
    """Parquet card configs loaded by datasets' packaged Parquet builder; each one's
    DatasetInfo, as `load_dataset` of that config alone would record it.

    The builder takes its features from the schema of a config's first file and casts the
    config's other files to them. Configs whose first files have equal schemas therefore
    load alike in one builder, one split per (config, split): the same reading and the
    same Arrow writing, once per group instead of once per config.
    """
    import pyarrow.parquet as pq
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.packaged_modules.parquet.parquet import Parquet

    groups: dict[bytes, list[str]] = {}
    for card, splits in configs.items():
        try:
            key = pq.read_schema(view / splits[0][1]).serialize().to_pybytes()
        except Exception:  # not Parquet: loaded alone, to fail with its own message
            key = card.encode("utf-8")
        groups.setdefault(key, []).append(card)
    out = {}
    for number, members in enumerate(groups.values()):
        keys = {
            f"c{i}_{j}": (card, split, path)
            for i, card in enumerate(members)
            for j, (split, path) in enumerate(configs[card])
        }  # fmt: skip
        try:
            builder = Parquet(
                cache_dir=str(scratch / "cache"), config_name=f"group{number}",
                dataset_name=view.name, hash="release",
                data_files={key: [str(view / path)] for key, (_, _, path) in keys.items()},
            )  # fmt: skip
            builder.download_and_prepare(download_mode="force_redownload")
        except Exception as exc:  # datasets raises many types; all mean "does not load"
            fault = write_fault(exc)
            if fault is not None:
                raise fault from None
            for card in members:  # which config it is: the first that does not load alone
                _load(view, card, configs[card], "parquet", scratch)
            raise InputError(
                f"configs {', '.join(members)} do not load together with load_dataset: {exc}"
            ) from None
        for card in members:
            found = SplitDict()
            for key, (of, split, _) in keys.items():
                if of == card:
                    held = builder.info.splits[key]
                    found.add(SplitInfo(split, held.num_bytes, held.num_examples))
            out[card] = DatasetInfo(
                features=builder.info.features, splits=found,
                download_size=sum((view / path).stat().st_size for _, path in configs[card]),
                dataset_size=sum(s.num_bytes for s in found.values()),
            )  # fmt: skip
    return out


def check_card(card_text: str, meta: RunMeta, infos: dict[str, Any], data_format: str) -> None:
    """What `load_dataset` reads from the card, read by datasets itself: every config
    names exactly its data files, and the features and row counts of its `dataset_info`
    are those the files loaded with (`infos`), so a load casts nothing and finds what the
    metadata records. The card is parsed once for all configs."""
    import yaml
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    # the YAML header as huggingface_hub reads it, parsed by libyaml where PyYAML has it
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        header = card_text.split("---\n", 2)[1]
        data = DatasetCardData(**yaml.load(header, Loader=loader))
        configs = MetadataConfigs.from_dataset_card_data(data)
        described = DatasetInfosDict.from_dataset_card_data(data)
    except Exception as exc:  # datasets raises many types; all mean "does not load"
        raise InputError(f"the card's metadata does not load with datasets: {exc}") from None
    for entry in card_configs(meta, data_format):
        name = entry["config_name"]
        held = configs.get(name, {})
        named = {
            f["split"]: [f["path"]] if isinstance(f["path"], str) else list(f["path"])
            for f in held.get("data_files", [])
        }
        if named != {f["split"]: [f["path"]] for f in entry["data_files"]} or held.get(
            "default", False
        ) != entry.get("default", False):
            raise InputError(f"the card's config {name} does not name its data files")
    for name, info in infos.items():
        card_info = described.get(name)
        if card_info is None or card_info.features != info.features:
            raise InputError(f"the card's features of config {name} are not those of its files")
        counts = {s: v.num_examples for s, v in (card_info.splits or {}).items()}
        if counts != {s: v.num_examples for s, v in info.splits.items()}:
            raise InputError(f"the card's row counts of config {name} are not those of its files")


def data_paths(meta: RunMeta) -> list[tuple[str, str]]:
    """Every (config, split) the metadata lists, as run-folder names."""
    return [(name, split) for name, info in meta["configs"].items() for split in info["rows"]]


def parquet_bytes(rows: list[dict[str, Any]], where: str) -> bytes:
    """One split's rows as a Parquet file: a column per key any row has (first seen
    first), types inferred per column; equal rows give equal bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    arrays = {}
    for column in columns:
        try:
            arrays[column] = pa.array([row.get(column) for row in rows])
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise InputError(
                f"{where}: column {column} mixes value types, so it has no Parquet type "
                f"({str(exc).splitlines()[0]})"
            ) from None
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(arrays), sink, row_group_size=1000, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


def release_files(folder: Path, meta: RunMeta, data_format: str) -> dict[str, Path | bytes]:
    """The folder's files as a release holds them: every data file in `data_format`
    (Parquet made from the rows; JSON Lines as gen wrote them), everything else as is."""
    files: dict[str, Path | bytes] = dict(folder_files(folder))
    for name, split in data_paths(meta):
        for suffix in DATA_FORMATS:
            files.pop(f"{name}/{split}.{suffix}", None)
        source = split_file(folder / name, split)
        assert source is not None  # check_folder saw it
        target = f"{name}/{split}.{data_format}"
        if data_format == "jsonl" and source.suffix == ".jsonl":
            files[target] = source
        elif data_format == "jsonl":
            rows = read_split(folder / name, split)
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            files[target] = text.encode("utf-8")
        else:
            files[target] = parquet_bytes(read_split(folder / name, split), f"{name}/{split}")
    return files


def expected_columns(meta: RunMeta, info: ConfigRecord) -> list[str]:
    """The columns every row of a config must have: the task's, and a variant's own."""

    source = meta["source"]
    schema = TASK_SCHEMAS.get(source["task_type"])
    columns = list(schema.required) if schema else []
    if info.get("kind") == "transform":
        columns += ["row_id", "status", "attempt"]
        columns += [f"original_{f}" for f in source.get("text_fields", [])]
    return columns


def release_inputs(
    folder: Path,
    repo: str | None,
    tag: str | None,
    human_dirs: tuple[Path, ...] = (),
    license_id: str | None = None,
    *,
    data_format: str = "parquet",
    results: tuple[str, ...] = (),
    rai: tuple[str, ...] = (),
    date_published: str | None = None,
) -> str:
    """The sha256 of everything a release is built from: every file of the run folder,
    of the human-eval folders and of the results folders (by path and sha256), the
    options, and this shiftbench's version. Equal inputs build an equal release, so a
    version published from them need not be built again to be found unchanged."""

    def tree(where: Path) -> dict[str, str]:
        if where.is_file():
            return {where.name: sha256_file(where)}
        return {rel: sha256_file(path) for rel, path in folder_files(where).items()}

    scored = []
    for item in results:
        name, sep, where = item.partition("=")
        if not sep or Path(item).exists():  # as cards/results.py reads the option
            name, where = "", item
        scored.append([name, tree(Path(where)) if Path(where).exists() else {}])
    doc = {
        "shiftbench_version": __version__,
        "repo": repo,
        "tag": tag,
        "data_format": data_format,
        "license": license_id,
        "rai": list(rai),
        "date_published": date_published,
        "folder": tree(folder),
        "human_eval": [tree(d) for d in human_dirs],
        "results": scored,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()


def manifest(release: Release, meta: RunMeta, data_format: str, inputs: str) -> bytes:
    """The release manifest: deterministic, so equal content gives equal bytes. `inputs`
    is what it was built from (release_inputs)."""
    source = meta["source"]
    doc = {
        "format": 1,
        "version": release.tag,
        "shiftbench_version": __version__,
        "data_format": data_format,
        "source": {
            "name": source.get("name"),
            "task_type": source.get("task_type"),
            "dataset": facts.source_dataset(source),
            "revision": source.get("revision"),
        },
        "configs": {name: info.get("rows", {}) for name, info in meta["configs"].items()},
        "files": release.listing(),
        "inputs": inputs,
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _schemas(
    files: dict[str, Path | bytes], meta: RunMeta
) -> dict[str, dict[str, tuple[str, Any]]]:
    """Per card config and split: the Parquet path and its Arrow schema."""
    import io

    import pyarrow.parquet as pq

    out: dict[str, dict[str, tuple[str, Any]]] = {}
    for name, info in meta["configs"].items():
        for split in info["rows"]:
            kind, _, of = context_name(split).rpartition("/")
            card = table_config(name, kind, info.get("subset")) if kind else name
            path = f"{name}/{split}.parquet"
            item = files[path]
            data = item if isinstance(item, bytes) else item.read_bytes()
            out.setdefault(card, {})[of] = (path, pq.read_schema(io.BytesIO(data)))
    return out


def _add_croissant(
    release: Release,
    meta: RunMeta,
    *,
    repo: str | None,
    human: list[dict[str, Any]],
    license_id: str | None,
    rai: list[tuple[str, str]],
    date_published: str | None,
) -> dict[str, Any]:
    """Adds croissant.json to a Parquet release; its document, for mlcroissant to read."""
    source = meta["source"]
    langs, _ = facts.languages(meta)
    lic, _ = facts.hub_license(license_id or source.get("license"))
    schemas = _schemas(release.files, meta)
    data = {path for splits in schemas.values() for path, _ in splits.values()}
    doc = croissant.build(
        meta,
        schemas,
        {path: release.sha256(path) for path in data},
        name=f"{source['name']} (shiftbench variants)",
        description=facts.summary(meta),
        license_value=lic,
        keywords=["mteb", "synthetic", "robustness", "shiftbench", source["task_type"]],
        languages=[lang for lang in langs if lang != "multilingual"],
        limitations=sections.limitations(human, license_id or source.get("license")),
        annotation=sections.human_analysis(human),
        repo=repo,
        version=release.tag,
        cite_as=sections.bibtex(source),
        rai=rai,
        validation=facts.validation_report(release.folder),
    )
    if date_published:
        doc["datePublished"] = date_published
    release.files[croissant.CROISSANT_FILE] = croissant.dumps(doc).encode("utf-8")
    return doc


def build(
    folder: Path,
    repo: str | None,
    tag: str | None,
    human_dirs: tuple[Path, ...] = (),
    license_id: str | None = None,
    *,
    data_format: str = "parquet",
    results: tuple[str, ...] = (),
    rai: tuple[str, ...] = (),
    date_published: str | None = None,
    inputs: str | None = None,
    checked: RunMeta | None = None,
) -> tuple[Release, RunMeta, str]:
    """Check the folder and assemble its release: files, card and manifest.

    `data_format` is `parquet` (the default: typed files the Hub's viewer reads as they
    are, and `croissant.json` describing them) or `jsonl` (the files as gen wrote them, as
    releases were before). `results` are evaluate results folders (`[NAME=]DIR`) whose
    scores go into the card; `rai` adds to Croissant's responsible-AI fields (FIELD=TEXT);
    `inputs` is release_inputs of these arguments, where the caller has hashed them already;
    `checked` the folder's metadata, where the caller has checked it with check_folder.
    Returns the release, the folder's metadata and the card text.
    """
    rai_fields = _format_checked(data_format, rai, date_published)
    # mlcroissant's reader is started now, so that its imports overlap the conversion and
    # the loading instead of preceding the reading of croissant.json
    with croissant.early_reader(data_format == "parquet") as early:
        meta = checked if checked is not None else check_folder(folder)
        human = facts.human_reports(human_dirs)
        models = evaluated.read_model_scores(results, meta)
        extra = _beside_data(human, models, repo, tag)
        files = {**release_files(folder, meta, data_format), **extra}
        files.pop(MANIFEST, None)  # a downloaded release's; a new one is made below
        files.pop(croissant.CROISSANT_FILE, None)
        release = Release(folder, tag)
        release.files.update(files)
        # Each config loaded once, for the features and sizes the card records; then the card
        # read back by datasets, as load_dataset reads it.
        doc = None
        if data_format == "parquet":
            doc = _add_croissant(release, meta, repo=repo, human=human, license_id=license_id,
                                 rai=rai_fields, date_published=date_published)  # fmt: skip
        with croissant.validating(doc, early) as validated:  # mlcroissant reads it meanwhile
            infos = infos_by_loading(files, meta, data_format)
            text = cards.render(
                folder, meta, infos=infos, repo=repo, tag=tag, human=human, license_id=license_id,
                data_format=data_format, models=models,
            )  # fmt: skip
            check_card(text, meta, infos, data_format)
            validated()
        release.files["README.md"] = text.encode("utf-8")
        if tag is not None:
            inputs = inputs or release_inputs(
                folder, repo, tag, human_dirs, license_id, data_format=data_format,
                results=results, rai=rai, date_published=date_published,
            )  # fmt: skip
            release.files[MANIFEST] = manifest(release, meta, data_format, inputs)
        return release, meta, text


def _beside_data(
    human: list[dict[str, Any]], models: list[ModelScores], repo: str | None, tag: str | None
) -> dict[str, Path | bytes]:
    """The release's files beside the data: each human evaluation's summary and the
    models' scores as the Hub's eval results."""
    extra: dict[str, Path | bytes] = {}
    for entry in human:
        summary = json.dumps(facts.human_summary(entry), indent=2, ensure_ascii=False) + "\n"
        extra[f"human_eval/{entry['name']}.json"] = summary.encode("utf-8")
    extra.update(evaluated.eval_results_files(models, repo, tag))
    return extra


def _format_checked(
    data_format: str, rai: tuple[str, ...], date_published: str | None
) -> list[tuple[str, str]]:
    """The --rai fields as (field, text), refused with an unknown format, and, like
    --date-published, with any format but Parquet (only it has croissant.json)."""
    if data_format not in DATA_FORMATS:
        raise InputError(f"--format must be one of {', '.join(DATA_FORMATS)}, got {data_format!r}")
    rai_fields = croissant.parse_rai(rai)
    if (rai_fields or date_published) and data_format != "parquet":
        raise InputError(
            "--rai and --date-published describe croissant.json, which only a Parquet release has"
        )
    return rai_fields
