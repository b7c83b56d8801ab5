"""The dataset card's prose, one function per section: identical outputs, the protocol,
how each variant was generated, the controls, the spec, validation, human evaluation,
loading, evaluating, limitations, Croissant."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from shiftbench.cards.facts import hub_license, source_languages
from shiftbench.core.data.runfolder import (
    IDENTICAL,
    IDENTITY_KEPT,
    META_FILE,
    SPEC_FILE,
)
from shiftbench.core.messages import counted
from shiftbench.core.records import RunMeta, SourceRecord, ValidationReport
from shiftbench.core.tables import markdown_table


def _identical(configs: dict[str, Any]) -> list[str]:
    """The sentence on unchanged back-translations, with their count."""
    kept = {n: i for n, i in configs.items() if i.get("transform") in IDENTITY_KEPT}
    if not kept:
        return []
    same = sum(
        c.get(IDENTICAL, 0) for i in kept.values() for c in i.get("status_counts", {}).values()
    )
    total = sum(sum(i.get("rows", {}).values()) for i in kept.values())
    return [
        "",
        "A back-translation identical to its input is a result, not a failure: back-translation "
        "is the near-identity baseline of the HTEB protocol, so these rows are kept with the "
        f"status `identical` and scored like `ok` rows ({same} of {total} back-translated rows "
        "here).",
    ]


def _protocol(protocol: dict[str, Any] | None, imported: bool = False) -> list[str]:
    """The protocol preset the run was made with (or, `imported` from HTEB's files,
    recorded with), every setting it fixes, and which of them an explicit option (or the
    files read) replaced."""
    if not protocol:
        return []
    made = (
        f"Read from HTEB's files and recorded with `--protocol {protocol['name']}`, which "
        "evaluate scores it with"
        if imported
        else f"Made with `--protocol {protocol['name']}`"
    )
    out = ["", "## Protocol", "", f"{made}: {protocol.get('description', '')}."]
    if protocol.get("citation"):
        out += ["", f"Source: {protocol['citation']}."]
    overridden = set(protocol.get("overridden", []))
    preset, used = protocol.get("preset", {}), protocol.get("settings", {})
    rows = [
        [key, _setting(preset[key]),
         _setting(used.get(key)) + (" (overridden)" if key in overridden else "")]
        for key in preset
    ]  # fmt: skip
    out += ["", markdown_table(["setting", "preset", "used"], rows, 3, tight_rule=True)]
    if overridden:
        by = "the files read" if imported else "explicit options"
        out += ["", f"Overridden by {by}: {', '.join(sorted(overridden))}."]
    return out


def _setting(value: Any) -> str:
    if value is None:
        return "backend default (not sent)"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_setting(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _generation(configs: dict[str, Any]) -> list[str]:
    out = ["", "## Generation", ""]
    groups: dict[str, list[str]] = {}
    details: dict[str, dict[str, Any]] = {}
    for name, info in configs.items():
        if info.get("kind") not in ("transform", "control") or "rule" in info:
            continue  # the original, and the controls made by rules (see _controls)
        key = json.dumps(
            [info.get(k) for k in ("model", "backend", "sampling", "prompts", "max_attempts")],
            sort_keys=True,
        )
        groups.setdefault(key, []).append(name)
        details[key] = info
    if not groups:
        if any("rule" in info for info in configs.values()):
            return [*out, "No config of this dataset was made by an LLM."]
        return [*out, "No config of this dataset was generated: it holds the source only."]
    for key, names in groups.items():
        info = details[key]
        model = info.get("model", {})
        backend = info.get("backend", {})
        made = ", ".join(f"{k} {v}" for k, v in backend.items() if k != "name")
        ident = model.get("digest") or model.get("revision") or model.get("package") or "-"
        sampling = ", ".join(
            f"{k}={'backend default' if v is None and k != 'max_new_tokens' else v}"
            for k, v in info.get("sampling", {}).items()
        )
        if "hteb" in info:
            sampled = (
                f"- sampling: not recorded in HTEB's files; at most "
                f"{counted(info.get('max_attempts', 1), 'attempt')} per text (HTEB's retries)"
            )
        else:
            sampled = (
                f"- sampling: {sampling or 'backend defaults'}; at most "
                f"{counted(info.get('max_attempts', 1), 'attempt')} per row, the seed of attempt k "
                "derived from the config's seed"
            )
        out += [
            f"Config{'s' if len(names) > 1 else ''} {', '.join(f'`{n}`' for n in names)}:",
            "",
            f"- model: `{model.get('id', '?')}` ({ident})",
            f"- backend: {backend.get('name', '?')}" + (f" ({made})" if made else ""),
            sampled,
        ]
        for prompt in info.get("prompts", []):
            out += [
                f"- prompt `{prompt.get('origin')}` (sha256 `{prompt.get('sha256', '')[:16]}…`):",
                "",
                "  ```text",
                *[f"  {line}".rstrip() for line in prompt.get("text", "").rstrip().splitlines()],
                "  ```",
            ]
        out.append("")
    out.append(f"The full provenance of every config is in `{META_FILE}`.")
    return out


def _hteb(configs: dict[str, Any]) -> list[str]:
    """The HTEB pairs configs were read from (`shiftbench hteb import`): file, generation
    time and limits, and what HTEB counted: texts, fallbacks with their reasons,
    unchanged outputs."""
    held = {n: i["hteb"] for n, i in configs.items() if i.get("hteb")}
    if not held:
        return []
    rows = []
    for name, doc in held.items():
        stats = doc.get("generation_statistics", {})
        reasons = stats.get("fallback_reasons") or {}
        why = ", ".join(f"{k} {v}" for k, v in reasons.items()) if isinstance(reasons, dict) else ""
        fallback = str(stats.get("text_fields_with_fallback", "-")) + (f" ({why})" if why else "")
        rows.append([
            f"`{name}`", f"`{doc.get('file', '-')}`", str(doc.get("generation_datetime") or "-"),
            str(doc.get("max_tokens", "-")), str(doc.get("max_retries", "-")),
            str(doc.get("max_model_length", "-")), str(stats.get("text_fields_total", "-")),
            fallback, str(stats.get("unchanged_outputs", "-")),
        ])  # fmt: skip
    header = ["config", "file", "generated (UTC)", "max_tokens", "max_retries",
              "max_model_length", "texts", "fallbacks (reasons)", "unchanged"]  # fmt: skip
    return [
        "",
        "## HTEB's files",
        "",
        "These configs were read from HTEB's published transformation files "
        "(`shiftbench hteb import`). A text HTEB's generator gave up on after its retries is "
        "empty in HTEB's file; here it stays empty, with the status `fallback`, never the "
        "source text in disguise. HTEB itself (and `evaluate --protocol hteb`) scores the "
        "original text in its place. HTEB counts the reasons per file, not per text:",
        "",
        markdown_table(header, rows, 3, tight_rule=True),
        "",
        "HTEB's files record neither its prompts nor its sampling settings; the file's "
        f"metadata and sha256 are under `hteb` in `{META_FILE}`.",
    ]


def _controls(configs: dict[str, Any]) -> list[str]:
    """The rule-based controls: what each rule does and what its outputs depend on."""
    ruled = {name: info for name, info in configs.items() if "rule" in info}
    if not any(info.get("kind") == "control" for info in configs.values()):
        return []
    out = [
        "",
        "## Controls",
        "",
        "Configs of kind `control` are perturbations whose effect on meaning is known in "
        "advance (ALIGN-SIM's criteria, except `negation`, shiftbench's own): they belong to "
        "no robustness axis and are meant for "
        "`shiftbench probe`, which checks that an encoder stays close when the meaning is "
        "preserved and moves away when it is changed. Every row has a `status_<field>` per "
        "field; a field a control found nothing to work on in (no word a rule can change; "
        "for `affirmative-paraphrase`, no negation) is `not-applicable` and left empty.",
        "",
    ]
    for name, info in ruled.items():
        lexicon = info.get("lexicon")
        line = f"- `{name}`: {info['rule']} (meaning {info.get('meaning')})"
        if lexicon:
            wordnet = lexicon.get("wordnet", {})
            line += (
                f"; WordNet {wordnet.get('version')} (sha256 `{wordnet.get('sha256', '')[:16]}…`), "
                f"{lexicon.get('tagger')}, {lexicon.get('inflection')}; parts of speech: "
                f"{', '.join(lexicon.get('parts_of_speech', []))}"
            )
        out.append(line)
    return out


def _spec(folder: Path) -> list[str]:
    """The `shiftbench run` spec that made the folder, with its hash, when there is one."""
    path = folder / SPEC_FILE
    if not path.is_file():
        return []
    data = path.read_bytes()
    return [
        "",
        "## How this release was made",
        "",
        f"`shiftbench run {SPEC_FILE}` made it, from this spec (`{SPEC_FILE}` in the "
        f"repository, sha256 `{hashlib.sha256(data).hexdigest()}`):",
        "",
        "```yaml",
        *data.decode("utf-8").rstrip().splitlines(),
        "```",
    ]


def _validation(configs: dict[str, Any], report: ValidationReport | None) -> list[str]:
    out = ["", "## Validation", ""]
    if report is None:
        return [*out, "This release was not validated with `shiftbench validate`."]
    rows = []
    measures: list[str] = []
    for name, summary in report.get("configs", {}).items():
        info = configs.get(name)
        if info is None or info.get("settings_sha256") != summary.get("settings_sha256"):
            continue  # validated before the config was made again: not this data
        rows.append((name, summary))
        measures += [m for m in summary.get("measures", {}) if m not in measures]
    if not rows:
        return [*out, "No config of this release was validated in its current form."]
    checks = report.get("checks", [])
    out += [
        "Automatic checks on every rewritten field (`shiftbench validate`, language ID by "
        f"{report.get('language_id', {}).get('name', '?')}): {', '.join(checks)}. A row fails "
        "when any of its fields fails a check. These checks run after generation and do not "
        "change a row's `status`; `validation/<config>.jsonl` lists, per row, the checks it "
        "failed, so they can be dropped too. Language ID does not know every language: "
        "rows in one it does not know are not checked for the wrong language (and not "
        "counted as failures).",
        "",
    ]
    table = []
    for name, summary in rows:
        means = []
        for key in measures:
            found = summary.get("measures", {}).get(key)
            mean = None if found is None else found.get("mean")
            means.append("-" if mean is None else f"{mean:.3f}")
        unchecked: int | str = summary.get("not_checked", {}).get("wrong-language", 0)
        if unchecked:
            unchecked = f"{unchecked} ({', '.join(summary.get('unchecked_languages', {}))})"
        table.append([
            f"`{name}`", str(summary.get("rows")), str(summary.get("failed_rows")),
            f"{100 * summary.get('total_error_rate', 0):.1f}%", str(unchecked),
            f"{summary.get('mean_edit_distance', 0):.3f}", *means,
        ])  # fmt: skip
    header = [
        "config", "rows", "failed rows", "error rate", "language not checked",
        "mean edit distance", *measures,
    ]  # fmt: skip
    out.append(markdown_table(header, table, tight_rule=True))
    worst = Counter[str]()
    for _, summary in rows:
        worst.update({k: v for k, v in summary.get("error_counts", {}).items() if v})
    if worst:
        common = ", ".join(f"{k} ({v})" for k, v in worst.most_common(4))
        out += ["", f"Most frequent failed checks over all configs: {common}."]
    if measures:
        out += ["", "Measure columns are means over the scored fields (`validation.json` says "
                "which judge, prompt and scale each one is)."]  # fmt: skip
    return out


def _human(human: list[dict[str, Any]]) -> list[str]:
    out = ["", "## Human evaluation", ""]
    if not human:
        return [*out, "No human ratings are part of this release."]
    for entry in human:
        doc = entry["report"]
        langs = (
            ", ".join(f"{k} ({counted(v, 'item')})" for k, v in entry["languages"].items()) or "-"
        )
        out += [
            f"Batch `{entry['name']}`: scheme {doc.get('scheme')}, "
            f"{counted(len(doc.get('kept_raters', [])), 'rater')} kept and "
            f"{len(doc.get('excluded_raters', []))} excluded by the control items; languages "
            f"rated: {langs}. Acceptance threshold {doc.get('threshold')}; agreement is "
            f"Gwet's AC2 with {doc.get('weights')} weights, and Krippendorff's alpha with "
            "ordinal distances where the report has it.",
            "",
        ]
        table = []
        for row in doc.get("rows", []):
            sd = "" if row.get("sd") is None else f" ± {row['sd']:.2f}"
            agreement = row.get("agreement") or {}
            ac2 = "-"
            if agreement.get("value") is not None:
                low, high = agreement["ci95"]
                ac2 = f"{agreement['value']:.3f} [{low:.3f}, {high:.3f}]"
            alpha = (row.get("alpha") or {}).get("ordinal") or {}
            ordinal = "-"
            if alpha.get("value") is not None:
                ordinal = f"{alpha['value']:.3f}"
                if alpha.get("ci95"):
                    ordinal += f" [{alpha['ci95'][0]:.3f}, {alpha['ci95'][1]:.3f}]"
            table.append([
                row["criterion"], row["level"], row["group"], str(row["items"]),
                str(row["ratings"]), f"{row['mean']:.2f}{sd}",
                f"{100 * row['accepted_share']:.0f}%", ac2, ordinal,
            ])  # fmt: skip
        header = [
            "criterion", "by", "group", "items", "ratings", "mean ± SD", "accepted",
            "AC2 [95% CI]", "alpha ordinal [95% CI]",
        ]  # fmt: skip
        out += [markdown_table(header, table, left=3, tight_rule=True), ""]
    out.append("The summaries are in `human_eval/`; rater ids are not published.")
    return out


def _loading(configs: dict[str, Any], repo: str | None, tag: str | None) -> list[str]:
    where = repo or "path/to/run-folder"
    revision = f', revision="{tag}"' if tag and repo else ""
    out = ["", "## Loading", ""]
    if tag and repo:
        out += [
            f"This is version `{tag}`. Versions are git tags of the repository and never "
            "change once published: name the version to get exactly these rows.",
            "",
        ]
    out += ["```python", "from datasets import load_dataset", ""]
    for name in configs:
        out.append(f'ds = load_dataset("{where}", "{name}"{revision})')
    out += ["```"]
    return out


def _kept_rows(meta: RunMeta, name: str) -> str:
    """The mteb snippet's filter: the statuses evaluate scores for this config."""
    if meta["configs"][name].get("transform") in IDENTITY_KEPT:
        return 'row["status"] in ("ok", "identical")'
    return 'row["status"] == "ok"'


def _evaluating(meta: RunMeta, repo: str | None, tag: str | None) -> list[str]:
    source = meta["source"]
    # A config in the source's own language(s), so the task's eval_langs are the source's.
    name = next(
        (
            n
            for n, i in meta["configs"].items()
            if i.get("kind") == "transform" and not i.get("target_languages")
        ),
        None,
    )
    out = ["", "## Evaluating an encoder", "", *_with_shiftbench(repo, tag)]
    if source["task_type"] in ("Retrieval", "Reranking"):
        out += _shared_corpus(source)
    single = list(source.get("subsets", ["default"])) == ["default"]
    if source["task_type"] != "STS" or name is None or not (repo and tag and single):
        return out
    eval_langs = source_languages(source)
    if not eval_langs:  # a local source that names no language: no task metadata to write
        return out
    return out + _as_mteb_task(meta, name, repo, tag, eval_langs)


def _with_shiftbench(repo: str | None, tag: str | None) -> list[str]:
    """How to evaluate an encoder on the release (or a run folder) with shiftbench."""
    local = repo.split("/")[-1] if repo else "run-folder"
    out: list[str] = []
    if repo and tag:
        out += [
            "With shiftbench (scores the original and every variant on the same rows, with "
            "mteb's metrics):",
            "",
            "```bash",
            f"hf download {repo} --repo-type dataset --revision {tag} --local-dir {local}",
            f"shiftbench evaluate {local} -m sentence-transformers/all-MiniLM-L6-v2",
            "```",
            "",
            f"or in one step, `shiftbench evaluate {repo}@{tag} -m MODEL` (the download is "
            "checked against the release manifest first). "
            f'`shiftbench.mteb_tasks("{repo}@{tag}")` gives every config as an mteb task, '
            "for `mteb.evaluate`.",
        ]
    else:
        out += ["```bash", "shiftbench evaluate path/to/run-folder -m MODEL", "```"]
    return out


def _shared_corpus(source: SourceRecord) -> list[str]:
    """Why a retrieval or reranking release holds only queries, and where the rest is."""
    revision = source.get("revision") or "unknown"
    # a local source's path is never written into a card
    where = source["dataset_path"] if source.get("mteb_task") else "the source folder"
    return [
        "",
        f"Only the queries are rewritten. The corpus and the relevance judgements are "
        f"the source's ({where} at revision `{revision}`), and "
        "evaluate reads them from there (`--data-dir` for a local copy), so every config "
        "searches the same corpus.",
    ]


def _as_mteb_task(
    meta: RunMeta, name: str, repo: str, tag: str, eval_langs: list[str]
) -> list[str]:
    """An STS config of the release as an mteb task class, in Python, and its use."""
    source = meta["source"]
    low, high = source.get("score_range") or (0, 5)
    return [
        "",
        "With mteb, as a task whose data is one config of this release (rows that failed "
        "validation at generation time are dropped first):",
        "",
        "```python",
        "import mteb",
        "from mteb.abstasks.sts import AbsTaskSTS",
        "from mteb.abstasks.task_metadata import TaskMetadata",
        "",
        "",
        "class ShiftedSTS(AbsTaskSTS):",
        f"    min_score = {low:g}",
        f"    max_score = {high:g}",
        "    metadata = TaskMetadata(",
        f'        name="{source["name"]}-{name}",',
        f'        dataset={{"path": "{repo}", "revision": "{tag}", "name": "{name}"}},',
        f'        description="{source["name"]}, config {name} of {repo} {tag}",',
        f'        reference="https://huggingface.co/datasets/{repo}",',
        '        type="STS",',
        '        category="t2t",',
        '        modalities=["text"],',
        f"        eval_splits={list(source.get('splits', ['test']))!r},",
        f"        eval_langs={eval_langs!r},",
        f'        main_score="{source.get("main_score", "cosine_spearman")}",',
        "        date=None,",
        "        domains=None,",
        "        task_subtypes=None,",
        "        license=None,",
        '        annotations_creators="derived",',
        "        dialect=None,",
        '        sample_creation="LM-generated and verified",',
        '        bibtex_citation="",',
        "    )",
        "",
        "    def dataset_transform(self, num_proc=None):",
        f"        self.dataset = self.dataset.filter(lambda row: {_kept_rows(meta, name)})",
        "",
        "",
        'model = mteb.get_model("sentence-transformers/all-MiniLM-L6-v2")',
        "results = mteb.evaluate(model, ShiftedSTS())",
        "```",
    ]


def bibtex(source: SourceRecord) -> str | None:
    """The source task's BibTeX as mteb records it (kept in the run folder since gen
    recorded it; asked of mteb for older folders), or None."""
    if not source.get("mteb_task"):
        return None
    if "citation" in source:
        return str(source["citation"])
    try:
        import mteb

        text = mteb.get_task(str(source["mteb_task"])).metadata.bibtex_citation
    except Exception:  # an unknown task in this mteb version: cite nothing rather than fail
        return None
    return text.strip() if text and text.strip() else None


def _citation(source: SourceRecord) -> list[str]:
    out = ["", "## Citation", ""]
    text = bibtex(source)
    if text is None:
        return [*out, "Cite the source dataset as its authors ask."]
    return [*out, "Please cite the source dataset:", "", "```bibtex", text, "```"]


def limitations(human: list[dict[str, Any]], license_value: str | None) -> list[str]:
    """What the release cannot vouch for, a sentence each (the card's Limitations and
    Croissant's rai:dataLimitations)."""
    checked = sorted({lang for entry in human for lang in entry["languages"]})
    out = [
        "The variants are written by a language model. They can drift in meaning, add or "
        "drop details, or keep traces of the prompt, even where every automatic check passed.",
        "The gold labels (scores, classes, relevance) are the source's, carried over on the "
        "assumption that a faithful rewrite keeps them; unfaithful rewrites break that.",
        "Validation measures other than the rule-based checks come from language models "
        "judging language models, with their own biases.",
    ]
    if checked:
        out.append(f"People rated samples in these languages only: {', '.join(checked)}.")
    else:
        out.append("No person has rated these variants.")
    _, note = hub_license(license_value)
    if note:
        out.append(f"License: {note} Check the source's terms before reuse.")
    return out


def human_analysis(human: list[dict[str, Any]]) -> list[str]:
    """One sentence per human-eval batch: raters kept, agreement per criterion."""
    out = []
    for entry in human:
        doc = entry["report"]
        parts = []
        for row in doc.get("rows", []):
            agreement = (row.get("agreement") or {}).get("value")
            if agreement is not None and row.get("group") in (None, "all"):
                parts.append(f"{row['criterion']} ({row['level']}) AC2 {agreement:.3f}")
        out.append(
            f"Human ratings, batch {entry['name']}: scheme {doc.get('scheme')}, "
            f"{counted(len(doc.get('kept_raters', [])), 'rater')} kept after control items"
            + (f"; Gwet's AC2: {', '.join(parts)}" if parts else "")
            + "."
        )
    return out


def _limitations(human: list[dict[str, Any]], license_value: str | None) -> list[str]:
    return ["", "## Limitations", "", *(f"- {line}" for line in limitations(human, license_value))]


def _croissant_section(data_format: str) -> list[str]:
    if data_format != "parquet":
        return []
    return [
        "",
        "## Croissant metadata",
        "",
        "`croissant.json` describes this release in the Croissant 1.0 vocabulary, checked "
        "with mlcroissant before publishing: every Parquet file with its sha256, a record "
        "set per config and split, and the responsible-AI fields (how the rows were made, "
        "by which model, how they were validated, their known limitations). Read it with "
        '`mlcroissant.Dataset(jsonld="croissant.json")` in a copy of the repository.',
    ]
