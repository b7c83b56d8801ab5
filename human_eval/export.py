"""Exporters: a batch's item table into what raters work with.

- `html`: one self-contained form per batch (no server, no network). A rater enters an id
  and rates every item; answers survive a reload (the browser's local storage), progress
  is shown, and the ratings download as CSV once every item is answered. Item texts
  travel as JSON inside the page and are only ever set as text, never parsed as HTML.
- `mturk`: a HIT template with `${field}` placeholders and a batch CSV whose headers match
  them, one HIT per group of items of one batch; Turkle and localturk read the same pair.
- `labelstudio`: tasks JSON and a labeling config with one choice control per criterion.
- `prolific`: the html forms for a Prolific study: the rater id comes from the study URL,
  and the form sends (or downloads) the ratings, then shows the completion code.
- `argilla`: the folder `argilla.Dataset.to_disk` writes (settings, dataset, records), which
  `argilla.Dataset.from_disk` loads into an Argilla server.
"""

from __future__ import annotations

import csv
import hashlib
import html
import json
import os
import re
import shutil
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from shiftbench.core.data.writes import stage_beside
from shiftbench.core.records import BatchDescription
from shiftbench.core.registry import Registry
from shiftbench.core.tables import spreadsheet_cell
from shiftbench.core.text.transforms import instruction

EXPORT_DIR = "export"
ITEMS_PER_HIT = 10


def by_batch(table: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    batches: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in table:
        batches[row["batch_id"]].append(row)
    return {b: sorted(rows, key=lambda r: r["position"]) for b, rows in sorted(batches.items())}


def _instruction(row: dict[str, Any], scheme: dict[str, Any]) -> str:
    if scheme.get("symmetric") or row["transform"] is None:
        return ""
    return instruction(row["transform"], row["language"]).capitalize() + "."


def _script_json(value: Any) -> str:
    """JSON that cannot end the <script> element it sits in, whatever the texts hold."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete?cc="


def export_html(
    description: BatchDescription, table: list[dict[str, Any]], out: Path
) -> list[Path]:
    """One form per batch: <out>/<batch_id>.html."""
    return _forms(description, table, out, None)


def export_prolific(
    description: BatchDescription, table: list[dict[str, Any]], out: Path
) -> list[Path]:
    """The html forms in Prolific's mode: the rater id is the PROLIFIC_PID the study URL
    carries (STUDY_ID and SESSION_ID go into the CSV too), and once every item is rated
    the form sends the ratings to the submit URL (or downloads them), then shows the
    completion code and the link back to Prolific."""
    given = description["prolific"]
    prolific = {
        "completion_code": given["completion_code"],
        "submit_url": given.get("submit_url"),
        "complete_url": PROLIFIC_COMPLETE + given["completion_code"],
    }
    return _forms(description, table, out, prolific)


def _forms(
    description: BatchDescription,
    table: list[dict[str, Any]],
    out: Path,
    prolific: dict[str, Any] | None,
) -> list[Path]:
    template = (resources.files("shiftbench.human_eval") / "form.html").read_text(encoding="utf-8")
    if prolific is not None and prolific["submit_url"]:
        # the page may send to the submit URL's origin and nowhere else
        url = urlsplit(prolific["submit_url"])
        policy = "default-src 'none';"
        assert policy in template
        template = template.replace(policy, f"{policy} connect-src {url.scheme}://{url.netloc};", 1)
    scheme = description["scheme"]
    labels = (
        {"a": "Text A", "b": "Text B"}
        if scheme.get("symmetric")
        else {"a": "Original", "b": "Rewrite"}
    )
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for batch_id, rows in by_batch(table).items():
        items = [
            {k: v for k, v in item.items() if k != "batch_id"} for item in shown_items(rows, scheme)
        ]
        data = {
            "title": f"Rating batch {batch_id}",
            "batch_id": batch_id,
            "scheme": {k: scheme[k] for k in ("instructions", "criteria") if k in scheme},
            "labels": labels,
            "items": items,
        }
        if prolific is not None:
            data["prolific"] = prolific
        data["form_id"] = hashlib.sha256(_script_json(data).encode("utf-8")).hexdigest()[:16]
        page = template.replace("__DATA__", _script_json(data), 1)
        path = out / f"{batch_id}.html"
        path.write_text(page, encoding="utf-8")
        written.append(path)
    return written


def _control_instruction(rows: list[dict[str, Any]], scheme: dict[str, Any]) -> str:
    """A control pair shows the instruction of a real item next to it, so that nothing
    on the page tells it apart."""
    if scheme.get("symmetric"):
        return ""
    for r in rows:
        if not r["is_control"]:
            return _instruction(r, scheme)
    return ""


def shown_items(rows: list[dict[str, Any]], scheme: dict[str, Any]) -> list[dict[str, str]]:
    """What a rater sees of each row: ids, the two texts, the instruction (controls get a
    real item's, so nothing tells them apart)."""
    return [
        {
            "batch_id": r["batch_id"],
            "item_id": r["item_id"],
            "text_a": r["text_a"],
            "text_b": r["text_b"],
            "instruction": _control_instruction(rows, scheme)
            if r["is_control"]
            else _instruction(r, scheme),
        }
        for r in rows
    ]


def _scale_text(criterion: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(p), criterion["labels"][str(p)]) for p in criterion["scale"]]


def export_mturk(
    description: BatchDescription, table: list[dict[str, Any]], out: Path
) -> list[Path]:
    """hit.html (the template) and batch.csv (one HIT per row) in `out`."""
    scheme = description["scheme"]
    size = int(description.get("items_per_hit") or ITEMS_PER_HIT)
    columns = ["batch_id", "hit_group"]
    for k in range(1, size + 1):
        columns += [f"item_id_{k}", f"text_a_{k}", f"text_b_{k}", f"instruction_{k}"]
    hits = _hits(table, scheme, columns, size)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "batch.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        # a text that begins like a formula is kept from running when the file is opened in
        # a spreadsheet; the HIT takes the guard off again before a rater sees the text
        writer.writerows({k: spreadsheet_cell(v) for k, v in hit.items()} for hit in hits)
    template = _hit_template(scheme, size)
    (out / "hit.html").write_text(template, encoding="utf-8")
    return [out / "hit.html", out / "batch.csv"]


def _hits(
    table: list[dict[str, Any]], scheme: dict[str, Any], columns: list[str], size: int
) -> list[dict[str, str]]:
    """batch.csv's rows: each batch's shown items, `size` to a HIT."""
    hits = []
    for batch_id, rows in by_batch(table).items():
        shown = shown_items(rows, scheme)
        for g, start in enumerate(range(0, len(shown), size), start=1):
            hit = {c: "" for c in columns}
            hit.update({"batch_id": batch_id, "hit_group": f"{batch_id}-{g:03d}"})
            for k, item in enumerate(shown[start : start + size], start=1):
                for field in ("item_id", "text_a", "text_b", "instruction"):
                    hit[f"{field}_{k}"] = item[field]
            hits.append(hit)
    return hits


def _hit_template(scheme: dict[str, Any], size: int) -> str:
    """hit.html: the instructions, `size` item sections of questions, and the script that
    drops a short HIT's empty sections and takes off batch.csv's formula guard."""
    criteria = scheme["criteria"]
    labels = ("Text A", "Text B") if scheme.get("symmetric") else ("Original", "Rewrite")
    sections = []
    for k in range(1, size + 1):
        questions = []
        for name, c in criteria.items():
            choices = "".join(
                f'<label><input type="radio" name="{name}_{k}" value="{point}" required> '
                f"{point} - {html.escape(label)}</label><br>"
                for point, label in _scale_text(c)
            )
            questions.append(f"<p><b>{html.escape(c['question'])}</b></p>{choices}")
        sections.append(
            f'<div class="item" data-item="${{item_id_{k}}}">'
            f"<p><i>${{instruction_{k}}}</i></p>"
            f"<p>{labels[0]}:</p><blockquote>${{text_a_{k}}}</blockquote>"
            f"<p>{labels[1]}:</p><blockquote>${{text_b_{k}}}</blockquote>"
            + "".join(questions)
            + "<hr></div>"
        )
    return (
        "<!-- shiftbench HIT template: every placeholder is a header of batch.csv -->\n"
        f"<p>{html.escape(scheme.get('instructions', ''))}</p>\n"
        + "\n".join(sections)
        + "\n<script>\n// A HIT's last group may hold fewer items: drop the empty sections.\n"
        "document.querySelectorAll('div.item').forEach(function (d) {\n"
        "  if (!d.getAttribute('data-item')) d.remove();\n});\n"
        "// batch.csv guards a text that begins like a spreadsheet formula with a leading ';\n"
        "// the rater sees the text as it is.\n"
        "document.querySelectorAll('div.item i, div.item blockquote').forEach(function (e) {\n"
        "  var t = e.firstChild;\n"
        "  if (t && t.nodeType === 3 && /^'+[=+\\-@\\t\\r]/.test(t.data)) {\n"
        "    t.data = t.data.slice(1);\n  }\n"
        "});\n</script>\n"
    )


def export_labelstudio(
    description: BatchDescription, table: list[dict[str, Any]], out: Path
) -> list[Path]:
    """tasks.json (one task per row of the item table) and config.xml."""
    scheme = description["scheme"]
    labels = ("Text A", "Text B") if scheme.get("symmetric") else ("Original", "Rewrite")
    tasks = []
    for rows in by_batch(table).values():
        tasks += [{"data": item} for item in shown_items(rows, scheme)]
    controls = []
    for name, c in scheme["criteria"].items():
        options = "".join(
            f'\n    <Choice value="{point}" hint="{html.escape(label, quote=True)}"/>'
            for point, label in _scale_text(c)
        )
        controls.append(
            f'  <Header value="{html.escape(c["question"], quote=True)}"/>\n'
            f'  <Choices name="{name}" toName="text_b" choice="single" required="true" '
            f'showInline="true">{options}\n  </Choices>'
        )
    config = (
        "<View>\n"
        '  <Text name="instruction" value="$instruction"/>\n'
        f'  <Header value="{labels[0]}"/>\n  <Text name="text_a" value="$text_a"/>\n'
        f'  <Header value="{labels[1]}"/>\n  <Text name="text_b" value="$text_b"/>\n'
        + "\n".join(controls)
        + "\n</View>\n"
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "tasks.json").write_text(
        json.dumps(tasks, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "config.xml").write_text(config, encoding="utf-8")
    return [out / "tasks.json", out / "config.xml"]


ARGILLA_CONFIG = ".argilla"  # Argilla's own folder for a dataset's settings and model


def _argilla_property(name: str, kind: str, **extra: Any) -> dict[str, Any]:
    """A field, question or metadata property as `argilla.Settings.serialize()` writes it
    (ids and dates are the server's, so None here)."""
    return {"id": None, "inserted_at": None, "updated_at": None, "name": name,
            "dataset_id": None, **extra} | ({"type": kind} if kind else {})  # fmt: skip


def _argilla_name(description: BatchDescription) -> str:
    """A dataset name Argilla accepts: letters, digits, - and _, from the run's folder."""
    run = Path(str(description.get("run") or "batch")).name
    scheme = str(description["scheme"].get("name") or "ratings")
    return re.sub(r"[^A-Za-z0-9_-]+", "-", f"shiftbench-{run}-{scheme}").strip("-_")


def export_argilla(
    description: BatchDescription, table: list[dict[str, Any]], out: Path
) -> list[Path]:
    """The folder `argilla.Dataset.to_disk` writes, which `argilla.Dataset.from_disk(out,
    client=...)` creates on an Argilla server: .argilla/settings.json (text fields, one
    rating question per criterion, guidelines, batch and item ids as metadata),
    .argilla/dataset.json, and records.json (one record per row of the item table, its id
    BATCH:ITEM). Each record is one rater's (a batch is one rater's), so every record is to
    be submitted once."""
    scheme = description["scheme"]
    settings = _argilla_settings(scheme)
    dataset = {
        "id": None, "inserted_at": None, "updated_at": None,
        "name": _argilla_name(description),
        "status": "draft", "guidelines": None, "allow_extra_metadata": False,
        "distribution": None, "workspace_id": None, "last_activity_at": None,
    }  # fmt: skip
    records = _argilla_records(table, scheme)
    (out / ARGILLA_CONFIG).mkdir(parents=True, exist_ok=True)
    written = [out / ARGILLA_CONFIG / "settings.json", out / ARGILLA_CONFIG / "dataset.json"]
    for path, doc in zip(written, (settings, dataset), strict=True):
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "records.json").write_text(
        json.dumps(records, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return [*written, out / "records.json"]


def _argilla_settings(scheme: dict[str, Any]) -> dict[str, Any]:
    """.argilla/settings.json: the text fields, one rating question per criterion, the
    guidelines, and the batch and item ids as metadata."""
    labels = ("Text A", "Text B") if scheme.get("symmetric") else ("Original", "Rewrite")
    text = {"type": "text", "use_markdown": False}
    fields = [
        _argilla_property(
            name, "text", settings=text, title=title, required=required, description=None
        )
        for name, title, required in (
            ("instruction", "Instruction", False),
            ("text_a", labels[0], True),
            ("text_b", labels[1], True),
        )
    ]
    questions = [
        _argilla_property(
            name,
            "rating",
            settings={"type": "rating", "options": [{"value": p} for p in c["scale"]]},
            title=c["question"],
            description="; ".join(f"{p} = {label}" for p, label in _scale_text(c)),
            required=True,
        )
        for name, c in scheme["criteria"].items()
    ]
    metadata = [
        _argilla_property(
            name,
            "",
            settings={"visible_for_annotators": False, "type": "terms", "values": None},
            title=name,
            visible_for_annotators=False,
        )
        for name in ("batch_id", "item_id")
    ]
    return {
        "guidelines": scheme.get("instructions") or "Rate each pair.",
        "questions": questions,
        "fields": fields,
        "vectors": [],
        "metadata": metadata,
        "allow_extra_metadata": False,
        "distribution": {"strategy": "overlap", "min_submitted": 1},
        "mapping": None,
    }


def _argilla_records(table: list[dict[str, Any]], scheme: dict[str, Any]) -> list[dict[str, Any]]:
    """records.json: one pending record per shown item, its id BATCH:ITEM."""
    records = []
    for rows in by_batch(table).values():
        for item in shown_items(rows, scheme):
            records.append(
                {
                    "id": f"{item['batch_id']}:{item['item_id']}",
                    "fields": {k: item[k] for k in ("instruction", "text_a", "text_b")},
                    "metadata": {"batch_id": item["batch_id"], "item_id": item["item_id"]},
                    "suggestions": {},
                    "responses": {},
                    "vectors": {},
                    "status": "pending",
                    "_server_id": None,
                }
            )
    return records


EXPORTERS = Registry(
    "export format",
    {
        "html": export_html,
        "mturk": export_mturk,
        "labelstudio": export_labelstudio,
        "argilla": export_argilla,
        "prolific": export_prolific,
    },
)
FORMATS = tuple(EXPORTERS)


def export(
    description: BatchDescription, table: list[dict[str, Any]], fmt: str, out: Path
) -> list[Path]:
    """Write the files of format `fmt` into `out`; returns them. They are made in a staging
    folder beside `out` and each is moved into place whole, so an export killed midway
    leaves no cut file in `out` (and the next export removes its staging folder)."""
    exporter = EXPORTERS.load(fmt)
    stage = stage_beside(out)
    try:
        made: list[Path] = exporter(description, table, stage)
        written = [out / path.relative_to(stage) for path in made]
        for path, target in zip(made, written, strict=True):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return written
