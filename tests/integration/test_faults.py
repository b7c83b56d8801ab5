"""Bad input and faults, one table: each case spoils a fresh run folder, source folder or
cache, runs one command, and checks the exit code, the one-line message (naming the file
and, for a data file, the line) and that nothing was written or changed.

The cases need no model: every input is refused before one loads (the embedding-cache
case loads all-MiniLM-L6-v2, which the cache's key needs). docs/guides/errors.md lists
what each bad input gets.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.disks import folder_holder, tmpfs
from support.environment import ENCODER
from support.results_files import as_gen_writes, record, results_folder

SAMPLE = Path(__file__).parents[2] / "sample" / "data" / "test.jsonl"


def run_folder(root: Path) -> Path:
    """A run folder of the sample's first six rows: the original and one paraphrase
    config (each row's sentences reversed word by word, status ok)."""
    folder = root / "run"
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:6]]
    rows = [{"row_id": i, **r} for i, r in enumerate(rows)]
    changed = [
        {**r, "status": "ok",
         **{f: " ".join(reversed(r[f].split())) for f in ("sentence1", "sentence2")}}
        for r in rows
    ]  # fmt: skip
    for name, table in (("original", rows), ("paraphrase-s1", changed)):
        (folder / name).mkdir(parents=True)
        text = "".join(json.dumps(r) + "\n" for r in table)
        (folder / name / "test.jsonl").write_text(text, encoding="utf-8")
    source = {"name": "sample", "task_type": "STS", "main_score": "cosine_spearman",
              "dataset_path": "sample", "revision": None,
              "text_fields": ["sentence1", "sentence2"], "score_range": [0.0, 5.0],
              "splits": ["test"]}  # fmt: skip
    configs = {
        "original": {"kind": "original", "subset": "default", "rows": {"test": 6}},
        "paraphrase-s1": {"kind": "transform", "subset": "default", "transform": "paraphrase",
                          "axis": "Lexical/Stylistic", "seed": 1, "rows": {"test": 6}},
    }  # fmt: skip
    meta = {"format": 1, "source": source, "configs": configs}
    (folder / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder


def source_folder(root: Path) -> Path:
    """A local STS source folder of the sample's first five rows, in the Hub layout."""
    folder = root / "source"
    (folder / "data").mkdir(parents=True)
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()[:5]
    (folder / "data" / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    card = ("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
            "    path: data/test.jsonl\n---\n")  # fmt: skip
    (folder / "README.md").write_text(card, encoding="utf-8")
    return folder


def utf16_csv_source(folder: Path) -> None:
    """The source folder's rows as a CSV file saved as UTF-16 (a spreadsheet's "Unicode
    text"), the card naming it."""
    import csv
    import io

    data = folder / "data" / "test.jsonl"
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    (folder / "data" / "test.csv").write_bytes(text.getvalue().encode("utf-16"))
    data.unlink()
    card = (folder / "README.md").read_text(encoding="utf-8")
    (folder / "README.md").write_text(card.replace("test.jsonl", "test.csv"), encoding="utf-8")


def append_bytes(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


DISK_FULL = (
    "Error: no space left on the device; free some space, or write elsewhere (--output, "
    "--cache-dir), and run the command again\n"
)
DELETE = object()  # set_row's value for a field to take out


def set_row(path: Path, index: int, **values: object) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[index].update(values)
    rows[index] = {k: v for k, v in rows[index].items() if v is not DELETE}
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def edit_meta(folder: Path, change: Callable[[dict], None]) -> None:
    meta = json.loads((folder / "shiftbench.json").read_text(encoding="utf-8"))
    change(meta)
    (folder / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")


def garbage(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a database; " * 200)


@dataclass(frozen=True)
class Case:
    """One bad input: how to spoil the fixture (`spoil(run, source, tmp)`), the command
    (`{run}`, `{source}`, `{out}`, `{tmp}` filled in), the exit code and the message,
    whose `{...}` are filled in the same way."""

    name: str
    spoil: Callable[[Path, Path, Path], None]
    command: tuple[str, ...]
    code: int
    message: str
    scripted: bool = False  # the command uses the scripted test backend


# gen on the local source folder (a rule-based control: no model needed)
GEN_LOCAL = ("gen", "{source}", "--task-type", "STS", "--source-language", "en", "-t",
             "word-jumble-1", "-q", "-o", "{out}")  # fmt: skip
EVALUATE = ("evaluate", "{run}", "-m", ENCODER, "-q", "--no-plots", "-o", "{out}")
VALIDATE = ("validate", "{run}", "-q")
DATA_FILE = "paraphrase-s1/test.jsonl"
DATA = "{run}/" + DATA_FILE
META = "{run}/shiftbench.json"

CASES = [
    Case("non-UTF-8 byte in a data file (validate)",
         lambda run, src, tmp: append_bytes(run / "paraphrase-s1" / "test.jsonl", b"\xff\n"),
         VALIDATE, 2, f"{DATA}:7: not UTF-8 text (byte 0xff at column 1)"),
    Case("non-UTF-8 byte in a data file (evaluate)",
         lambda run, src, tmp: append_bytes(run / DATA_FILE, b'{"a": "\xe9"}\n'),
         EVALUATE, 2, f"{DATA}:7: not UTF-8 text (byte 0xe9 at column 8)"),
    Case("a null text (validate refuses it as evaluate does)",
         lambda run, src, tmp: set_row(run / "paraphrase-s1" / "test.jsonl", 2, sentence1=None),
         VALIDATE, 2, f"{DATA}:3: field sentence1 must be a string, not null"),
    Case("an integer text (evaluate)",
         lambda run, src, tmp: set_row(run / "paraphrase-s1" / "test.jsonl", 4, sentence2=7),
         EVALUATE, 2, f"{DATA}:5: field sentence2 must be a string, not int"),
    Case("a truncated line in a data file",
         lambda run, src, tmp: append_bytes(run / DATA_FILE, b'{"row_id": 6, "sen'),
         VALIDATE, 2, f"{DATA}:7: not valid JSON (the line ends before the row does)"),
    Case("configs is a list (validate)",
         lambda run, src, tmp: edit_meta(run, lambda m: m.update(configs=list(m["configs"]))),
         VALIDATE, 2, f"{META}: configs must be an object of config name -> its description"),
    Case("configs is a list (evaluate)",
         lambda run, src, tmp: edit_meta(run, lambda m: m.update(configs=list(m["configs"]))),
         EVALUATE, 2, f"{META}: configs must be an object of config name -> its description"),
    Case("a config's row counts of the wrong type",
         lambda run, src, tmp: edit_meta(run, lambda m: m["configs"]["original"].update(rows=6)),
         EVALUATE, 2, f"{META}: configs.original.rows must be an object of split -> row count"),
    Case("an emptied data file (validate)",
         lambda run, src, tmp: (run / DATA_FILE).write_bytes(b""),
         VALIDATE, 2, f"{DATA}: holds 0 rows, but shiftbench.json says 6; was the file cut "
                      "or replaced?"),
    Case("a data file with rows cut off the end (evaluate)",
         lambda run, src, tmp: (run / DATA_FILE).write_text(
             "".join((run / DATA_FILE).read_text().splitlines(keepends=True)[:4])),
         EVALUATE, 2, f"{DATA}: holds 4 rows, but shiftbench.json says 6; was the file cut "
                      "or replaced?"),
    Case("a row without its text field (evaluate)",
         lambda run, src, tmp: set_row(run / DATA_FILE, 3, sentence1=DELETE),
         EVALUATE, 2, f"{DATA}:4: missing field(s) sentence1"),
    Case("a row without its text field (validate)",
         lambda run, src, tmp: set_row(run / DATA_FILE, 3, sentence2=DELETE),
         VALIDATE, 2, f"{DATA}:4: missing field(s) sentence2"),
    Case("a data file shiftbench.json lists is gone",
         lambda run, src, tmp: (run / DATA_FILE).unlink(),
         EVALUATE, 2, f"{DATA}: no such file, though shiftbench.json lists paraphrase-s1/test"),
    Case("no shiftbench.json",
         lambda run, src, tmp: (run / "shiftbench.json").unlink(),
         VALIDATE, 2, "{run} is not a shiftbench run folder (no shiftbench.json)"),
    Case("shiftbench.json not JSON",
         lambda run, src, tmp: (run / "shiftbench.json").write_text('{"format": 1,'),
         VALIDATE, 2, f"{META}: not valid JSON (Expecting property name enclosed in double "
                      "quotes, line 1 column 14)"),
    Case("shiftbench.json not UTF-8",
         lambda run, src, tmp: append_bytes(run / "shiftbench.json", b"\xff"),
         VALIDATE, 2, f"{META}: not UTF-8 text"),
    Case("an evaluate results.json cut short (report)",
         lambda run, src, tmp: (tmp / "results").mkdir() or (tmp / "results" / "results.json")
         .write_text('{"models": '),
         ("report", "{tmp}/results", "-o", "{out}"), 2,
         "{tmp}/results/results.json: not valid JSON (Expecting value, line 1 column 12)"),
    Case("a truncated line in a local source folder",
         lambda run, src, tmp: append_bytes(src / "data" / "test.jsonl", b'{"sentence1": "cut'),
         GEN_LOCAL,
         2, "{source}/data/test.jsonl:6: not valid JSON (the line ends before the row does)"),
    Case("a split the run folder does not have",
         lambda run, src, tmp: None,
         (*EVALUATE, "--split", "dev"), 2, "unknown split 'dev' for run; available: test"),
    Case("a subset the run folder does not have",
         lambda run, src, tmp: None,
         (*EVALUATE, "--subset", "fr"), 2, "unknown subset 'fr' for run; available: default"),
    Case("a --markers file of the wrong shape (a string where a list belongs)",
         lambda run, src, tmp: (tmp / "markers.json").write_text('{"prefix": {"en": "Sure"}}'),
         (*VALIDATE, "--markers", "{tmp}/markers.json"), 2,
         "marker file {tmp}/markers.json is not a marker table (prefix.en is not a list of "
         "non-empty phrases)"),
    Case("an output inside the source folder it reads",
         lambda run, src, tmp: None,
         ("gen", "{source}", "--task-type", "STS", "--source-language", "en", "-t",
          "word-jumble-1", "-q", "-o", "{source}/runs/x"),
         2, "output {source}/runs/x is inside the source folder {source}; a run folder there "
            "would become part of the source (and change its fingerprint): choose an --output "
            "outside it"),
    Case("an output folder inside a file",
         lambda run, src, tmp: None,
         (*EVALUATE[:-1], "{run}/shiftbench.json/results"), 2,
         "Invalid value for '--output' / '-o': {run}/shiftbench.json/results: "
         "{run}/shiftbench.json is a file, not a folder"),
    Case("an output folder that is a file",
         lambda run, src, tmp: None,
         ("gen", "sample", "-t", "word-jumble-1", "-q", "-o", "{run}/shiftbench.json"), 2,
         "Invalid value for '--output' / '-o': Directory '{run}/shiftbench.json' is a file."),
    Case("an unknown backend, with rule-based controls only",
         lambda run, src, tmp: None,
         ("gen", "sample", "-t", "word-jumble-1", "-b", "carrierpigeon", "-q", "-o", "{out}"),
         2, "unknown backend 'carrierpigeon'; available: embedded, ollama, openai, vllm"),
    Case("a generation cache that is not a database",
         lambda run, src, tmp: garbage(tmp / "cache" / "generations.sqlite"),
         ("gen", "sample", "--limit", "2", "-b", "scripted", "--cache-dir", "{tmp}/cache", "-q",
          "-o", "{out}"),
         2, "the generation cache {tmp}/cache/generations.sqlite is not a readable SQLite "
            "database (file is not a database); delete it (its results are made again), or "
            "give another --cache-dir", scripted=True),
]  # fmt: skip

# Names read from a file that would become a path out of their folder (core/data/names.py).
# Each hostile name goes through every reader that turns it into a path.
HOSTILE = ("../../victim", "a/b", "..", ".hidden", "nul\x00byte", "")
RULE = ("is not a safe name; a name must be one path component of letters, digits and . _ - "
        "+ (a letter or digit first, at most 200 characters)")  # fmt: skip


def rename_config(new: str) -> Callable[[Path, Path, Path], None]:
    """Spoil: the paraphrase config is listed under the name `new`; a file of its rows
    waits where that name leads (outside the run folder, for a traversal), so that a reader
    following the name would find one and carry on."""

    def spoil(run: Path, src: Path, tmp: Path) -> None:
        meta = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))
        meta["configs"][new] = meta["configs"].pop("paraphrase-s1")
        (run / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")
        if "\x00" not in new and new not in ("", ".."):
            target = (run / new).resolve()
            target.mkdir(parents=True, exist_ok=True)
            (target / "test.jsonl").write_bytes((run / DATA_FILE).read_bytes())

    return spoil


def rename_split(run: Path, src: Path, tmp: Path) -> None:
    """Spoil: the paraphrase config's split is `../../victim`, whose file waits outside."""
    meta = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))
    meta["configs"]["paraphrase-s1"]["rows"] = {"../../victim": 6}
    (run / "shiftbench.json").write_text(json.dumps(meta), encoding="utf-8")
    (tmp / "victim.jsonl").write_bytes((run / DATA_FILE).read_bytes())


def link_out(what: str) -> Callable[[Path, Path, Path], None]:
    """Spoil: the paraphrase config's folder (`what` = "folder") or its data file ("file")
    is a symbolic link to a copy outside the run folder."""

    def spoil(run: Path, src: Path, tmp: Path) -> None:
        outside = tmp / "outside"
        outside.mkdir()
        (outside / "test.jsonl").write_bytes((run / DATA_FILE).read_bytes())
        if what == "folder":
            shutil.rmtree(run / "paraphrase-s1")
            (run / "paraphrase-s1").symlink_to(outside, target_is_directory=True)
        else:
            (run / DATA_FILE).unlink()
            (run / DATA_FILE).symlink_to(outside / "test.jsonl")

    return spoil


def batch_item(**values: object) -> Callable[[Path, Path, Path], None]:
    """Spoil: a rating batch of the run folder at TMP/batch, its first item's fields set
    to `values` (a batch folder travels to raters and back)."""

    def spoil(run: Path, src: Path, tmp: Path) -> None:
        from shiftbench import make_batches

        make_batches(run, tmp / "batch")
        set_row(tmp / "batch" / "items.jsonl", 0, **values)

    return spoil


# Every reader of a run folder's names: each refuses before it reads or writes a file.
NAME_READERS = {
    "validate": VALIDATE,
    "evaluate": EVALUATE,
    "card": ("card", "{run}", "--repo", "org/name", "--version", "1.0.0", "-o", "{out}/README.md"),
    "publish": ("publish", "{run}", "--repo", "org/name", "--version", "1.0.0", "--dry-run"),
    "gen resume": ("gen", "sample", "-t", "word-jumble-1", "-q", "-o", "{run}"),
    "merge": ("merge", "{run}", "-o", "{out}"),
    "human-eval batch": ("human-eval", "batch", "{run}", "-o", "{out}"),
    "hteb export": ("hteb", "export", "{run}", "-o", "{out}"),
}
CONFINED: list[Case] = [
    *(Case(f"config name {name!r} ({reader})", rename_config(name), command, 2,
           f"{META}: config name {name[:80]!r} {RULE}")
      for name in HOSTILE for reader, command in NAME_READERS.items()),
    *(Case(f"split name '../../victim' ({reader})", rename_split, command, 2,
           f"{META}: configs.paraphrase-s1.rows: split name '../../victim' {RULE}")
      for reader, command in NAME_READERS.items()),
    *(Case(f"a config folder linked out of the run folder ({reader})", link_out("folder"),
           command, 2, f"{META}: config 'paraphrase-s1' leads out of {{run}} (a symbolic link "
                       "to {tmp}/outside); a file of a folder must stay inside it")
      for reader, command in (("validate", VALIDATE), ("evaluate", EVALUATE))),
    *(Case(f"a data file linked out of the run folder ({reader})", link_out("file"), command, 2,
           f"{META}: configs.paraphrase-s1: data file 'paraphrase-s1/test.jsonl' leads out of "
           "{run} (a symbolic link to {tmp}/outside/test.jsonl); a file of a folder must stay "
           "inside it")
      for reader, command in (("validate", VALIDATE), ("evaluate", EVALUATE))),
    *(Case(f"a rating batch's {field} {value!r} ({command[1]})", batch_item(**{field: value}),
           command, 2, f"{{tmp}}/batch/items.jsonl:1: field {field} must be {rule}, not "
                       f"{value!r}")
      for field, value, rule in (
          ("batch_id", "../../pwn", "a safe name (one path component of letters, digits and "
                                    ". _ - + (a letter or digit first, at most 200 characters))"),
          ("item_id", "../../x/test/0/sentence1",
           "CONFIG/... with CONFIG a safe name (letters, digits and . _ - +, a letter or digit "
           "first)"))
      for command in (("human-eval", "export", "{tmp}/batch"),
                      ("human-eval", "report", "{tmp}/batch"))),
]  # fmt: skip


# Gold scores every reader of a run folder checks (publish refuses what evaluate would).
GOLD: list[Case] = [
    *(Case(f"a gold score {shown} ({reader})",
           lambda run, src, tmp, value=value: set_row(run / DATA_FILE, 2, score=value),
           command, 2, f"{DATA}:3: field score must be a finite number, not {shown}")
      for value, shown in ((None, "null"), (float("nan"), "NaN"), (float("inf"), "inf"),
                           ("4.2", "'4.2'"))
      for reader, command in (("validate", VALIDATE), ("evaluate", EVALUATE),
                              ("publish", NAME_READERS["publish"]))),
    Case("a null gold score in a local source folder (gen)",
         lambda run, src, tmp: set_row(src / "data" / "test.jsonl", 3, score=None),
         GEN_LOCAL,
         2, "{source}/data/test.jsonl:4: field score must be a finite number, not null"),
    Case("a row without its gold score (evaluate)",
         lambda run, src, tmp: set_row(run / DATA_FILE, 1, score=DELETE),
         EVALUATE, 2, f"{DATA}:2: missing field(s) score"),
]  # fmt: skip
CASES += GOLD


# Values that readers trust: gold scores and labels, results.json's figures.
# (checked by the one reader of each file, for every consumer)
REPORT = ("report", "{tmp}/results", "-o", "{out}", "--no-plots")
LEADERBOARD = ("leaderboard", "{tmp}/results", "-o", "{out}")
CARD_RESULTS = ("card", "{run}", "--repo", "org/name", "--version", "1.0.0", "--results",
                "{tmp}/results")  # fmt: skip
RESULTS = "{tmp}/results/results.json: models[0]"
NAN, INF = float("nan"), float("inf")

VALUES: list[Case] = [
    Case("a NaN main score in results.json (report)",
         lambda run, src, tmp: results_folder(tmp, lambda d: record(d, 1, main_score=NAN)),
         REPORT, 2, f"{RESULTS}.results[1].main_score must be a finite number, not NaN"),
    Case("a NaN main score in results.json (card --results)",
         lambda run, src, tmp: as_gen_writes(run) or results_folder(
             tmp, lambda d: record(d, 0, main_score=NAN)),
         CARD_RESULTS, 2, f"{RESULTS}.results[0].main_score must be a finite number, not NaN"),
    Case("an infinite delta in results.json (leaderboard)",
         lambda run, src, tmp: results_folder(tmp, lambda d: record(d, 1, delta=INF)),
         LEADERBOARD, 2,
         f"{RESULTS}.results[1].delta must be a finite number or null, not Infinity"),
    Case("an interval with a NaN end in results.json (leaderboard)",
         lambda run, src, tmp: results_folder(tmp, lambda d: record(d, 1, ci95=[NAN, 0.6])),
         LEADERBOARD, 2, f"{RESULTS}.results[1].ci95[0] must be a finite number, not NaN"),
    Case("a record without its main score (report)",
         lambda run, src, tmp: results_folder(tmp, lambda d: record(d, 0, main_score=...)),
         REPORT, 2, f"{RESULTS}.results[0].main_score is missing (it must be a finite number)"),
    Case("a record without its main score (card --results)",
         lambda run, src, tmp: as_gen_writes(run) or results_folder(
             tmp, lambda d: record(d, 1, main_score=...)),
         CARD_RESULTS, 2,
         f"{RESULTS}.results[1].main_score is missing (it must be a finite number)"),
    Case("a row count as a string in results.json (report)",
         lambda run, src, tmp: results_folder(tmp, lambda d: record(d, 1, rows="6")),
         REPORT, 2, f"{RESULTS}.results[1].rows must be a count of rows, not a string ('6')"),
    Case("a model without its name in results.json (card --results)",
         lambda run, src, tmp: as_gen_writes(run) or results_folder(
             tmp, lambda d: d["models"][0]["model"].pop("id")),
         CARD_RESULTS, 2, f"{RESULTS}.model.id is missing (it must be a model name)"),
    Case("models as an object in results.json (leaderboard)",
         lambda run, src, tmp: results_folder(tmp, lambda d: d.update(models={})),
         LEADERBOARD, 2,
         "{tmp}/results/results.json: models must be a list of models, not an object"),
    # a results folder's config, split and subset names follow the run folder's rule
    *(Case(f"a {key} named {name!r} in results.json ({command[0]})",
           lambda run, src, tmp, key=key, name=name, command=command: (
               as_gen_writes(run) if command[0] == "card" else None) or results_folder(
               tmp, lambda d: record(d, 1, **{key: name})),
           command, 2, f"{RESULTS}.results[1].{key} must be a safe name (letters, digits and "
                       f". _ - +, a letter or digit first), not a string ({name!r})")
      for key, name in (("config", "../../victim"), ("split", "a/b"), ("subset", ".."))
      for command in (REPORT, LEADERBOARD, CARD_RESULTS)),
]  # fmt: skip


# Bad input that once ended in a raw exception (exit 1 and a traceback's last line).
# Now one line, exit 2, nothing written.
SURROGATE = f"{DATA}:3: field sentence1 holds a lone surrogate (\\ud800), which is not Unicode text"
RAW: list[Case] = [
    Case("an empty data file in a local source folder",
         lambda run, src, tmp: (src / "data" / "test.jsonl").write_bytes(b""),
         GEN_LOCAL,
         2, "{source}/data/test.jsonl: holds no rows; the test split of {source}[default] "
            "needs at least one"),
    Case("a --prompt-file that is not text",
         lambda run, src, tmp: (tmp / "prompt.png").write_bytes(b"\x89PNG\r\n\x1a\n{text}"),
         ("gen", "sample", "-t", "paraphrase", "--prompt-file", "{tmp}/prompt.png", "-q", "-o",
          "{out}"),
         2, "prompt file {tmp}/prompt.png:1: not UTF-8 text (byte 0x89); a prompt file is a "
            "UTF-8 text template"),
    Case("init onto a folder",
         lambda run, src, tmp: None,
         ("init", "{run}", "--force"), 2,
         "{run} is a folder; name the spec file to write, e.g. {run}/shiftbench.yaml"),
    Case("a model folder without config.json",
         lambda run, src, tmp: (tmp / "model").mkdir() or (tmp / "model" / "README.md")
         .write_text("weights elsewhere"),
         (*EVALUATE[:3], "{tmp}/model", *EVALUATE[4:]), 2,
         "encoder folder {tmp}/model holds no config.json (nor modules.json); a local model is "
         "a folder a sentence-transformers or transformers model was saved to"),
    Case("a lone surrogate in a row (validate)",
         lambda run, src, tmp: set_row(run / DATA_FILE, 2, sentence1="bad \ud800 text"),
         VALIDATE, 2, SURROGATE),
    Case("a lone surrogate in a row (evaluate)",
         lambda run, src, tmp: set_row(run / DATA_FILE, 2, sentence1="bad \ud800 text"),
         EVALUATE, 2, SURROGATE),
    Case("a lone surrogate in a row (publish, before the Hub is asked)",
         lambda run, src, tmp: set_row(run / DATA_FILE, 2, sentence1="bad \ud800 text"),
         ("publish", "{run}", "--repo", "shiftbench-test/faults", "--version", "1.0.0"), 2,
         SURROGATE),
    Case("a spec nested 20,000 deep",
         lambda run, src, tmp: (tmp / "spec.yaml").write_text(
             "output: out\nsources: " + "[" * 20_000 + "]" * 20_000 + "\n"),
         ("run", "{tmp}/spec.yaml"), 2,
         "{tmp}/spec.yaml:2: nested more than 32 levels deep; a spec names sources and "
         "settings, not data"),
]  # fmt: skip


# Messages that once said what was not true (a wrong diagnosis).
# Each now names the real cause.
DIAGNOSED: list[Case] = [
    Case("init into a path through a file (not a folder that does not exist)",
         lambda run, src, tmp: (tmp / "afile").write_text("x"),
         ("init", "{tmp}/afile/spec.yaml"), 2,
         "{tmp}/afile/spec.yaml: {tmp}/afile is a file, not a folder"),
    Case("a local source row without its text field (not 'holds NoneType at row 0')",
         lambda run, src, tmp: set_row(src / "data" / "test.jsonl", 0, sentence1=DELETE),
         GEN_LOCAL,
         2, "{source}/data/test.jsonl:1: missing field(s) sentence1"),
    Case("a local source row whose text is null, further down",
         lambda run, src, tmp: set_row(src / "data" / "test.jsonl", 3, sentence2=None),
         GEN_LOCAL,
         2, "{source}/data/test.jsonl:4: field sentence2 must be a string, not null"),
    Case("a UTF-16 CSV source (not 'not UTF-8 text')",
         lambda run, src, tmp: utf16_csv_source(src),
         GEN_LOCAL,
         2, "{source}/data/test.csv: UTF-16 text (it starts with UTF-16's byte-order mark), "
            "not UTF-8; save it as UTF-8"),
    Case("a run folder's data file saved as UTF-16",
         lambda run, src, tmp: (run / DATA_FILE).write_bytes(
             (run / DATA_FILE).read_text(encoding="utf-8").encode("utf-16")),
         VALIDATE, 2, f"{DATA}: UTF-16 text (it starts with UTF-16's byte-order mark), not "
                      "UTF-8; save it as UTF-8"),
]  # fmt: skip


CASES += CONFINED + VALUES + RAW + DIAGNOSED


TOKEN = "hf_faultsuiteSECRET0123456789"  # set as HF_TOKEN for every case; never shown


def no_token(*places: Path | str) -> bool:
    """Whether TOKEN is absent from each text and from every file under each folder."""
    for place in places:
        if isinstance(place, str):
            if TOKEN in place:
                return False
            continue
        files = [place] if place.is_file() else [p for p in place.rglob("*") if p.is_file()]
        if any(TOKEN.encode() in f.read_bytes() for f in files):
            return False
    return True


@pytest.fixture(autouse=True)
def _token(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(case, request, invoke, tmp_path):
    if case.scripted:
        request.getfixturevalue("scripted")
    run, source = run_folder(tmp_path), source_folder(tmp_path)
    case.spoil(run, source, tmp_path)
    before = {"run": _digest(run), "source": _digest(source)}
    out = tmp_path / "out"
    fill = {"run": run, "source": source, "out": out, "tmp": tmp_path}
    result = invoke(*(part.format(**fill) for part in case.command))
    assert result.exit_code == case.code, result.output
    assert result.stderr == f"Error: {case.message.format(**fill)}\n"
    assert result.stdout == ""
    assert not out.exists()
    assert {"run": _digest(run), "source": _digest(source)} == before
    assert no_token(result.output, result.stderr, tmp_path)


def test_a_corrupt_embedding_cache_is_named_with_the_ways_out(invoke, tmp_path):
    """The embedding cache's file for the model holds garbage: one line naming it and the
    two ways out, exit 2, no results written."""
    cache = tmp_path / "cache"
    first = invoke("evaluate", "sample", "-m", ENCODER, "-q", "--no-plots", "--resamples", "0",
                   "--cache-dir", cache, "-o", tmp_path / "first")  # fmt: skip
    assert first.exit_code == 0, first.output
    (store,) = cache.glob("*.sqlite")
    garbage(store)
    out = tmp_path / "out"
    result = invoke("evaluate", "sample", "-m", ENCODER, "-q", "--no-plots", "--cache-dir", cache,
                    "-o", out)  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"Error: the embedding cache {store} is not a readable SQLite database (file is not a "
        "database); delete it (its results are made again), or give another --cache-dir\n"
    )
    assert not out.exists()
    assert no_token(result.output, tmp_path)


def test_a_second_writer_of_one_run_folder_is_refused_while_the_first_runs(invoke, tmp_path):
    """Two gen processes on one output: while another process holds the run folder, gen
    is refused with one line naming the holder's pid and writes nothing; once the holder
    is gone (here killed outright, as kill -9 would), the lock goes with it."""
    import signal

    from support.waiting import wait_for

    out = tmp_path / "run"
    marker = tmp_path / "held"
    holder = folder_holder(out, marker)
    try:
        wait_for(lambda: marker.exists() or holder.poll() is not None, 60, "the holder's lock")
        assert holder.poll() is None
        args = ("gen", "sample", "-t", "word-jumble-1", "--limit", "2", "-q", "-o", out)
        result = invoke(*args)
        assert (result.exit_code, result.stderr) == (
            2,
            f"Error: output {out} is being written by another shiftbench process (pid "
            f"{holder.pid}); wait for it to finish, or choose another --output\n",
        )
        assert not out.exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert (out / "word-jumble-1-s1337" / "test.jsonl").is_file()
    assert no_token(result.output, tmp_path)


def test_a_write_cut_short_leaves_the_old_file_and_no_partial_one(invoke, monkeypatch, tmp_path):
    """A disk that fills while `card` writes README.md: the command fails, the card the
    folder had stays byte for byte, no partial file is left, and publish would never pick
    up a temporary file."""
    import errno

    from shiftbench.core.data import writes
    from shiftbench.core.hub import folder_files

    out = tmp_path / "run"
    assert (
        invoke("gen", "sample", "-t", "word-jumble-1", "--limit", "2", "-q", "-o", out).exit_code
        == 0
    )
    before = (out / "README.md").read_bytes()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writes.os, "fsync", full)
    result = invoke("card", out, "--repo", "shiftbench-test/faults", "--version", "1.0.0")
    assert (result.exit_code, result.stderr) == (1, DISK_FULL)
    assert (out / "README.md").read_bytes() == before
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
    (out / "validation.json.tmp").write_text("", encoding="utf-8")  # an older cut write
    assert "validation.json.tmp" not in folder_files(out)
    assert no_token(result.output, tmp_path)


def test_a_cache_another_process_holds_is_waited_for_then_named(
    invoke, scripted, monkeypatch, tmp_path
):
    """Another process holds the generation cache's write lock and does not let go: gen
    waits SHIFTBENCH_LOCK_WAIT seconds, then says so in one line naming the holder's pid
    (exit 1, a fault of the moment rather than bad input), and blames no backend."""
    import subprocess
    import sys

    from support.waiting import wait_for

    cache = tmp_path / "cache"
    cache.mkdir()
    marker = tmp_path / "held"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import pathlib, sqlite3, sys\n"
         f"db = sqlite3.connect({str(cache / 'generations.sqlite')!r}, isolation_level=None)\n"
         "db.execute('PRAGMA journal_mode=WAL')\n"
         "db.execute('CREATE TABLE generations (key TEXT PRIMARY KEY, text TEXT NOT NULL, '\n"
         "           'finish_reason TEXT NOT NULL)')\n"
         "db.execute('BEGIN IMMEDIATE')\n"
         f"pathlib.Path({str(marker)!r}).write_text('held')\n"
         "sys.stdin.read()\n"],
        stdin=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_for(lambda: marker.exists() or holder.poll() is not None, 60, "the holder's lock")
        assert holder.poll() is None
        monkeypatch.setenv("SHIFTBENCH_LOCK_WAIT", "1")
        out = tmp_path / "out"
        result = invoke("gen", "sample", "--limit", "2", "-b", "scripted", "--cache-dir", cache,
                        "-q", "-o", out)  # fmt: skip
        assert (result.exit_code, result.stderr) == (
            1,
            f"Error: the generation cache {cache / 'generations.sqlite'} stayed locked by "
            f"another process (pid {holder.pid}) for 1 s; wait for it to finish, or give "
            "another --cache-dir\n",
        )
        assert not out.exists()
    finally:
        holder.stdin.close()  # type: ignore[union-attr]
        holder.wait(timeout=60)


def test_a_full_disk_fails_in_one_line_and_keeps_the_run_folder(invoke, tmp_path):
    """A second gen that adds a config to a run folder on a disk with no room left: one
    line (exit 1) saying so and what to do, and the folder stays byte for byte as the
    first gen left it, with no partial config and no temporary file."""
    with tmpfs(tmp_path / "disk", "size=40k") as disk:
        out = disk / "run"
        first = invoke("gen", "sample", "-t", "word-jumble-1", "-q", "-o", out)
        assert first.exit_code == 0, first.output
        before = _digest(out)
        result = invoke("gen", "sample", "-t", "word-jumble-2", "-q", "-o", out)
        assert (result.exit_code, result.stderr) == (1, DISK_FULL)
        assert _digest(out) == before
        assert sorted(p.name for p in disk.iterdir()) == ["run"]
        assert no_token(result.output, disk)


def test_an_output_on_a_read_only_file_system_is_refused_before_any_work(invoke, tmp_path):
    with tmpfs(tmp_path / "disk", "ro,size=64k") as disk:
        for args in (("gen", "sample", "-t", "word-jumble-1", "-q"),
                     ("evaluate", "sample", "-m", ENCODER, "-q", "--no-plots")):  # fmt: skip
            result = invoke(*args, "-o", disk / "out")
            assert (result.exit_code, result.stderr) == (
                2,
                f"Error: Invalid value for '--output' / '-o': {disk}/out: {disk} cannot be "
                "written (a read-only file system)\n",
            )


def test_a_10_mb_row_is_read_and_flagged_as_runaway(invoke, scripted, tmp_path):
    """A row whose rewrite is 10 MB of text is no reason to fail or stall: validate reads
    it like any row and flags that row alone as a runaway output."""
    out = tmp_path / "run"
    made = invoke("gen", "sample", "--limit", "4", "-b", "scripted", "-q", "-o", out)
    assert made.exit_code == 0, made.output
    (config,) = (p for p in out.iterdir() if p.name.startswith("paraphrase"))
    clean = invoke("validate", out, "-q")
    assert clean.exit_code == 0, clean.output
    flagged = _runaway_rows(out / "validation" / f"{config.name}.jsonl")
    set_row(config / "test.jsonl", 2, sentence1="word " * 2_000_000)
    result = invoke("validate", out, "-q")
    assert result.exit_code == 0, result.output
    assert _runaway_rows(out / "validation" / f"{config.name}.jsonl") == flagged | {2}
    assert no_token(result.output, tmp_path)


def _runaway_rows(path: Path) -> set[int]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {r["row_id"] for r in rows if "runaway" in r["failed"]}


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ("garbage", "{run}/validation.json: not valid JSON (Expecting value, line 1 column 1)"),
        ('{"configs": []}',
         "{run}/validation.json: configs must be an object of config name -> its summary"),
        ("[]", "{run}/validation.json: must hold one JSON object (what validate found)"),
    ],
)  # fmt: skip
def test_a_spoilt_validation_report_is_named_by_card(invoke, tmp_path, report, message):
    """card reads validation.json for its figures: one it cannot read is named, where it
    once passed for a folder never validated."""
    run = tmp_path / "run"
    assert (
        invoke("gen", "sample", "-t", "word-jumble-1", "--limit", "4", "-q", "-o", run).exit_code
        == 0
    )
    (run / "validation.json").write_text(report, encoding="utf-8")
    before = _digest(run)
    result = invoke("card", run, "--repo", "org/name", "--version", "1.0.0")
    assert (result.exit_code, result.stderr) == (2, f"Error: {message.format(run=run)}\n")
    assert _digest(run) == before


def test_publish_refuses_a_file_linked_out_of_the_run_folder(invoke, tmp_path):
    """A shared run folder holding a link to a file outside it (a key, a password file):
    publish names the link and uploads nothing, where it once sent what the link points
    to as a file of the release."""
    run = tmp_path / "run"
    made = invoke("gen", "sample", "-t", "word-jumble-1", "--limit", "2", "-q", "-o", run)
    assert made.exit_code == 0, made.output
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the Hub", encoding="utf-8")
    (run / "notes.txt").symlink_to(secret)
    result = invoke("publish", run, "--repo", "org/name", "--version", "1.0.0", "--dry-run")
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {run}/notes.txt is a symbolic link to {secret}, outside {run}; a file of a "
        "folder must stay inside it (copy the file in, or remove the link)\n",
    )
    assert "not for the Hub" not in result.output
