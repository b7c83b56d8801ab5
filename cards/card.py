"""Dataset cards: YAML metadata and prose, rendered from a run folder and its reports.

The card is built with huggingface_hub's `DatasetCard`/`DatasetCardData`, so the Hub and
`datasets` read it as they read any card: `configs` lists every config and split,
`dataset_info` every config's features and sizes (taken from actually loading it). The
text holds no timestamps, so the same folder, version and reports always give the same
bytes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from shiftbench.cards import results
from shiftbench.cards.facts import (
    TASK_CATEGORIES,
    hub_license,
    languages,
    size_category,
    source_dataset,
    summary,
    validation_report,
)
from shiftbench.cards.results import ModelScores
from shiftbench.cards.sections import (
    _citation,
    _controls,
    _croissant_section,
    _evaluating,
    _generation,
    _hteb,
    _human,
    _identical,
    _limitations,
    _loading,
    _protocol,
    _spec,
    _validation,
)
from shiftbench.core.data.runcard import card_configs, default_config
from shiftbench.core.records import ConfigRecord, RunMeta, ValidationReport


def card_data(
    meta: RunMeta,
    infos: dict[str, object],
    license_id: str | None,
    data_format: str = "jsonl",
    model_index: list[Any] | None = None,
) -> Any:
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    source = meta["source"]
    langs, multilinguality = languages(meta)
    lic, _ = hub_license(license_id or source.get("license"))
    rows = sum(sum(info.get("rows", {}).values()) for info in meta["configs"].values())
    origin = source_dataset(source)
    data = DatasetCardData(
        pretty_name=f"{source['name']} (shiftbench variants)",
        license=lic,
        language=langs,
        multilinguality=multilinguality,
        task_categories=[TASK_CATEGORIES[source["task_type"]]]
        if source["task_type"] in TASK_CATEGORIES
        else None,
        size_categories=[size_category(rows)],
        source_datasets=[f"{origin}@{source['revision']}"] if origin else None,
        annotations_creators=["machine-generated"],
        tags=["mteb", "synthetic", "robustness", "shiftbench"],
        configs=card_configs(meta, data_format),
    )
    if model_index:
        data["model-index"] = model_index  # not an attribute name: set as an item
    DatasetInfosDict(infos).to_dataset_card_data(data)
    return data


def render(
    folder: Path,
    meta: RunMeta,
    *,
    infos: dict[str, object],
    repo: str | None = None,
    tag: str | None = None,
    human: list[dict[str, object]] | None = None,
    license_id: str | None = None,
    data_format: str = "jsonl",
    models: list[ModelScores] | None = None,
) -> str:
    """The whole card (YAML header and prose) as text."""
    index = results.model_index(models, repo, tag) if models else None
    data = card_data(meta, infos, license_id, data_format, index)
    validation = validation_report(folder)
    body = "\n".join(
        _prose(meta, repo=repo, tag=tag, validation=validation, human=human or [],
               license_id=license_id, spec=_spec(folder), data_format=data_format,
               models=models or [])
    )  # fmt: skip
    return f"---\n{card_yaml(data)}\n---\n\n{body}".rstrip("\n") + "\n"


def card_yaml(data: Any) -> str:
    """The card's YAML header: what huggingface_hub's `CardData.to_yaml` writes (keys in
    their order, unicode as it is), emitted by libyaml where PyYAML has it, which is many
    times faster on the long `dataset_info` of a release with many configs."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(data.to_dict(), Dumper=dumper, sort_keys=False, allow_unicode=True)
    return text.strip()


def _prose(
    meta: RunMeta,
    *,
    repo: str | None,
    tag: str | None,
    validation: ValidationReport | None,
    human: list[dict[str, object]],
    license_id: str | None,
    spec: list[str],
    data_format: str,
    models: list[ModelScores],
) -> list[str]:
    source = meta["source"]
    configs = meta["configs"]
    fields = ", ".join(f"`{f}`" for f in source["text_fields"])
    out = [
        f"# {source['name']}: shiftbench variants" + (f" {tag}" if tag else ""),
        "",
        summary(meta, markdown=True),
        "",
        f"The config `original` holds the source rows as they are; `load_dataset` with no "
        f"config name loads `{default_config(meta)}`. Every other config is one "
        f"transformation with one seed: the fields {fields} are rewritten, every other column "
        "is kept, the source text stays beside the new one as `original_<field>`, and each "
        "row has a `status` (`ok`, `identical` for a back-translation that came back "
        "unchanged, or the reason the output was rejected) and the `attempt` that produced "
        "it; each rewritten field has its own status as `status_<field>` (one per text of a "
        "list; in a run made before shiftbench kept them, the row's `status` stands for "
        "every text), so a row says which of its texts failed and why, and the row's "
        "`status` names its first failure. A rejected row keeps its empty or failed output; "
        "it is never filled with the "
        'source text, so select `status == "ok"` (and, for back-translation, `"identical"`) '
        "before scoring.",
    ]
    out += _configs_table(configs)
    out += _identical(configs)
    out += _protocol(meta.get("protocol"), imported=any(c.get("hteb") for c in configs.values()))
    out += _generation(configs)
    out += _hteb(configs)
    out += _controls(configs)
    out += spec
    out += _validation(configs, validation)
    out += _human(human)
    out += results.prose(models)
    out += _croissant_section(data_format)
    out += _loading(configs, repo, tag)
    out += _evaluating(meta, repo, tag)
    out += _citation(source)
    out += _limitations(human, license_id or source.get("license"))
    return out


def _configs_table(configs: dict[str, ConfigRecord]) -> list[str]:
    """The configs section: per config its transform, axis, seed, target languages, rows
    per split and the statuses counted at generation."""
    out = [
        "",
        "## Configs",
        "",
        "| config | transform | axis | seed | target languages | rows | status at generation |",
        "|---|---|---|---:|---|---:|---|",
    ]
    for name, info in configs.items():
        counts: Counter[str] = Counter()
        for per_split in info.get("status_counts", {}).values():
            counts.update(per_split)
        rows = " + ".join(f"{n} {s}" for s, n in info.get("rows", {}).items())
        status = ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "-"
        targets = ", ".join(info.get("target_languages") or []) or "-"
        axis: str = info.get("axis") or "-"
        if info.get("kind") == "control":
            axis = f"control (meaning {info.get('meaning')})"
        out.append(
            f"| `{name}` | {info.get('transform', '-')} | {axis} | "
            f"{info.get('seed', '-')} | {targets} | {rows} | {status} |"
        )
    return out
