"""A run folder's README.md as gen writes it: the `configs:` header that lets
`load_dataset(folder, config)` find each config's files (a ranking config's tables as
configs of their own) and a short table of the configs. The full dataset card is cards'."""

from __future__ import annotations

from typing import Required, TypedDict

from shiftbench.core.data.parts import context_name
from shiftbench.core.records import ConfigRecord, RunMeta

META_FILE = "shiftbench.json"  # the run folder's record of its source and configs


class DataFiles(TypedDict):
    """One split of a card config: its name and its data file in the repository."""

    split: str
    path: str


class CardConfig(TypedDict, total=False):
    """One entry of a dataset card's `configs:` list (the Hub's dataset viewer and
    `load_dataset` read it)."""

    config_name: Required[str]
    data_files: Required[list[DataFiles]]
    default: bool


def render_card(meta: RunMeta, data_format: str = "jsonl") -> str:
    """A minimal dataset card: the `configs:` that load_dataset needs and a config table."""
    import yaml

    source = meta["source"]
    configs = meta["configs"]
    header = {
        "pretty_name": f"{source['name']} (shiftbench variants)",
        "tags": ["shiftbench", "mteb", "synthetic", "robustness"],
        "configs": card_configs(meta, data_format),
    }
    where = source["dataset_path"]
    if source.get("revision"):
        where += f"@{source['revision']}"
    lines = [
        "---",
        yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# {source['name']}: shiftbench variants",
        "",
        f"{made_by(meta, 'LLM-transformed variants')} of the {source['task_type']} dataset "
        f"`{where}`, made with "
        f"shiftbench {meta['shiftbench_version']}. The fields rewritten are "
        f"{', '.join(f'`{f}`' for f in source['text_fields'])}; every transformed row keeps "
        "its original text beside the new one, with a `status`: `ok`, `identical` (a "
        "back-translation that came back unchanged: kept and scored) or a reason code; each "
        "rewritten field has its own as `status_<field>` (which text failed, and why), "
        "and the row's `status` is its first failure." + _parts_sentence(meta),
        "",
        "| config | transform | axis | seed | rows | status |",
        "|---|---|---|---|---|---|",
    ]
    for name, info in configs.items():
        rows = sum(info["rows"].values())
        counts = _merged_counts(info.get("status_counts", {}))
        status = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"
        lines.append(
            f"| `{name}` | {info.get('transform', '-')} | {shown_axis(info)} | "
            f"{info.get('seed', '-')} | {rows} | {status} |"
        )
    lines += [
        "",
        "Provenance of every config (prompt and its hash, model, backend, sampling) "
        f"is in `{META_FILE}`.",
        "",
    ]
    return "\n".join(lines)


def made_by(meta: RunMeta, rewritten: str) -> str:
    """What the run's configs are, to begin a card's first sentence: `rewritten` (the LLM's
    variants, in the card's words), rule-based controls, or both."""
    kinds = {info.get("kind") for info in meta["configs"].values()}
    if "control" not in kinds:
        return rewritten
    if "transform" not in kinds:
        return "Rule-based controls"
    return f"{rewritten} and rule-based controls"


def shown_axis(info: ConfigRecord) -> str:
    """A config's robustness axis as a card's table shows it: `control` for a rule-based
    control (which has none), `-` where there is none."""
    if info.get("kind") == "control":
        return "control"
    return str(info.get("axis") or "-")


def _parts_sentence(meta: RunMeta) -> str:
    """What the variants rewrote beyond the scored texts, when they did (gen --rewrite)."""
    if not meta.get("rewrite"):
        return ""
    return f" The variants rewrite: {', '.join(meta['rewrite'])}."


def default_config(meta: RunMeta) -> str:
    """The config `load_dataset(repo)` loads when none is named: the source's rows
    (`original`, or with several subsets the first `original.<subset>`), else the first."""
    configs = meta["configs"]
    return next((n for n, i in configs.items() if i.get("kind") == "original"), next(iter(configs)))


def card_configs(meta: RunMeta, data_format: str = "jsonl") -> list[CardConfig]:
    """The card's `configs:` list: every config and split, the original the default.

    `data_format` is the data files' extension: `jsonl` in a run folder, `parquet` in a
    release (see shiftbench.cards.release). A ranking config's corpus, judgements and
    candidates (`corpus.test` and so on, see shiftbench.core.data.parts) have columns of their own,
    so each kind is a config of its own on the card, as in a ranking dataset's own
    repository: `original-corpus` (with several subsets `original-corpus.en`), split `test`.
    """
    out: list[CardConfig] = []
    default = default_config(meta)
    for name, info in meta["configs"].items():
        tables: dict[str, list[DataFiles]] = {}
        files: list[DataFiles] = []
        for split in info["rows"]:
            kind, _, of = context_name(split).rpartition("/")
            entry: DataFiles = {"split": of, "path": f"{name}/{split}.{data_format}"}
            (tables.setdefault(kind, []) if kind else files).append(entry)
        config: CardConfig = {"config_name": name, "data_files": files}
        if name == default:
            config["default"] = True
        out.append(config)
        out += [
            {"config_name": table_config(name, kind, info.get("subset")), "data_files": entries}
            for kind, entries in tables.items()
        ]
    return out


def card_rows(name: str, info: ConfigRecord) -> dict[str, dict[str, int]]:
    """The rows per split of each card config a run-folder config is loaded as: itself,
    and for a ranking config each of its tables (see card_configs)."""
    out: dict[str, dict[str, int]] = {name: {}}
    for split, rows in info["rows"].items():
        kind, _, of = context_name(split).rpartition("/")
        card = table_config(name, kind, info.get("subset")) if kind else name
        out.setdefault(card, {})[of] = rows
    return out


def table_config(name: str, kind: str, subset: str | None) -> str:
    """The card config of a ranking config's table: `original-corpus`, `original-corpus.en`."""
    if subset and name.endswith(f".{subset}"):
        return f"{name[: -len(subset) - 1]}-{kind}.{subset}"
    return f"{name}-{kind}"


def _merged_counts(per_split: dict[str, dict[str, int]]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for counts in per_split.values():
        for status, n in counts.items():
            merged[status] = merged.get(status, 0) + n
    return merged
