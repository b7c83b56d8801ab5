"""shiftbench hteb import/export of HTEB's retrieval files: corpus, queries and judgements
in one record list, checked as HTEB's loader checks them, read into a self-contained run
and written back the same."""

from __future__ import annotations

import copy
import json

import pytest
from support.files import read_rows
from support.hteb_retrieval import (
    arguana_tree,
    filtered,
    hub_records,
    loader_accepts,
    rewrite,
    tree_files,
    write_generated,
)


def test_a_retrieval_tree_imports_as_a_self_contained_run(shared_data, invoke, tmp_path):
    records = arguana_tree(shared_data, tmp_path / "tree")
    run = tmp_path / "run"
    result = invoke("hteb", "import", tmp_path / "tree", "-o", run)
    assert result.exit_code == 0, result.output
    meta = json.loads((run / "shiftbench.json").read_text(encoding="utf-8"))
    assert meta["source"]["context_splits"] == ["corpus/test", "qrels/test"]
    assert meta["source"]["revision"] == "6c1bcf74b13dfd823aff056b79d4d93e702f19c7"
    assert meta["rewrite"] == ["queries", "corpus"]
    rows = {c: i["rows"] for c, i in meta["configs"].items()}
    assert rows == {
        "original": {"test": 29, "corpus.test": 17, "qrels.test": 29},
        "paraphrase-s1337": {"test": 29, "corpus.test": 17},  # transform_corpus: true
        "style-change-s1338": {"test": 29},  # scored on the original's documents
    }
    stored = records["original"]
    assert read_rows(run / "original" / "qrels.test.jsonl")[0] == {
        k: stored[46][k] for k in ("query-id", "corpus-id", "score")
    }
    documents = read_rows(run / "paraphrase-s1337" / "corpus.test.jsonl")
    # a blank title HTEB's generator never sent stays as it was; the text it gave up on is
    # empty, with its own status, which is the row's
    assert (documents[1]["title"], documents[1]["status_title"]) == ("", "empty-input")
    assert (documents[1]["text"], documents[1]["status_text"]) == ("", "fallback")
    assert documents[1]["status"] == "fallback"
    # an untitled document whose text came back as it was: the text decides the row
    assert (documents[3]["status_title"], documents[3]["status"]) == ("empty-input", "identical")
    assert documents[0]["title"] == f"In other words, {stored[0]['title']}"


def test_import_then_export_writes_the_same_bytes_and_blanks_what_is_not_scored(
    shared_data, invoke, tmp_path
):
    tree, run, back = tmp_path / "tree", tmp_path / "run", tmp_path / "back"
    arguana_tree(shared_data, tree)
    assert invoke("hteb", "import", tree, "-o", run).exit_code == 0
    result = invoke("hteb", "export", run, "-o", back)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"wrote 2 HTEB pairs (paraphrasing/1337, style_change/1338) to {back}\n"
    )
    assert tree_files(back) == tree_files(tree)
    # a placeholder output and a text still cut at its budget are written empty, as
    # HTEB's generator writes a text it gave up on and --protocol hteb restores them
    path = run / "style-change-s1338" / "test.jsonl"
    rows = read_rows(path)
    rows[0]["text"] = "N/A"
    rows[3]["status_text"] = "truncated"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert invoke("hteb", "export", run, "-o", tmp_path / "again").exit_code == 0
    _, rewritten = loader_accepts(tmp_path / "again")["style_change/1338"]
    queries = [r for r in rewritten if r["_hteb_part"] == "queries"]
    # the second query HTEB's generator gave up on itself
    assert [q["text"] for q in queries[:4]] == ["", "", queries[2]["text"], ""]
    assert queries[2]["text"].startswith("Formally put:")


def _tree(shared_data, root, change, *, transform_corpus=True, report_change=None, **extra):
    """A one-pair arguana tree whose stored records (and rewrite, and filter report) one
    change has made into something HTEB's loader or writer would not have."""
    raw = hub_records(shared_data)
    stored, report = filtered(raw)
    rewritten = rewrite(stored, transform_corpus, "So:", set(), set())[0]
    stored, rewritten = change(stored, rewritten, raw)
    if report_change:
        report_change(report)
    stats = rewrite(stored, transform_corpus, "So:", set(), set())[1]
    folder = write_generated(root, "arguana", "paraphrasing", 1337, stored, rewritten, stats,
                             report, transform_corpus, "2026-09-20T10:00:00Z")  # fmt: skip
    return folder


def _unfiltered(stored, rewritten, raw):
    return raw, rewrite(raw, True, "So:", set(), set())[0]


def _duplicate_document(stored, rewritten, raw):
    stored, rewritten = copy.deepcopy(stored), copy.deepcopy(rewritten)
    stored[3]["_id"] = rewritten[3]["_id"] = stored[2]["_id"]
    return stored, rewritten


def _score_changed(stored, rewritten, raw):
    rewritten = copy.deepcopy(rewritten)
    rewritten[-1]["score"] = 2
    return stored, rewritten


def _document_rewritten(stored, rewritten, raw):
    rewritten = copy.deepcopy(rewritten)
    rewritten[0]["text"] = "A document HTEB was not asked to rewrite."
    return stored, rewritten


def _other_split(stored, rewritten, raw):
    stored, rewritten = copy.deepcopy(stored), copy.deepcopy(rewritten)
    for records in (stored, rewritten):
        for r in records:
            if r["_hteb_part"] == "qrels":
                r["_hteb_split"] = "dev"
    return stored, rewritten


def _alias(stored, rewritten, raw):
    stored, rewritten = copy.deepcopy(stored), copy.deepcopy(rewritten)
    for records in (stored, rewritten):
        records[17]["query"] = records[17]["text"]
    return stored, rewritten


def _same(stored, rewritten, raw):
    return stored, rewritten


def _miscounted(report):
    for counts in (report["counts_before"], report["counts_after"]):
        counts["corpus"] += 1
        counts["qrels"] -= 1


def _nothing_left_out(report):
    report["counts_after"] = dict(report["counts_before"])
    report["excluded"] = []


CASES = {
    "unfiltered": (_unfiltered, {"report_change": _nothing_left_out},
                   "record 20: query 'unjudged-query' has no judgement, so HTEB's data filter "
                   "leaves it out; HTEB's generator stores only the records its filter keeps"),
    "duplicate document": (_duplicate_document, {}, "record 3: document id 'd0-2' is used twice"),
    "score changed": (_score_changed, {}, "record 74: score differs from the original's, yet "
                      "HTEB rewrites texts alone"),
    "document rewritten": (_document_rewritten, {"transform_corpus": False}, "record 0: text "
                           "differs from the original's, yet transform_corpus is false"),
    "other split": (_other_split, {}, "its judgements are of split 'dev'; ArguAna is scored "
                    "on 'test'"),
    "alias": (_alias, {}, "record 17: holds 'query', a name HTEB's writer does not use; its "
              "queries records hold _id, text"),
    "miscounted": (_same, {"report_change": _miscounted}, "data_filtering: its counts after "
                   "filtering differ from the stored records (records 75, corpus 17, queries "
                   "29, qrels 29)"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_retrieval_tree_is_refused_in_one_line_and_nothing_is_written(
    case, shared_data, invoke, tmp_path
):
    change, options, message = CASES[case]
    folder = _tree(shared_data, tmp_path / "tree", change, **options)
    out = tmp_path / "run"
    result = invoke("hteb", "import", tmp_path / "tree", "-o", out)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    data = next(folder.glob("data_*.parquet"))
    assert line.startswith(f"Error: {data}"), line
    assert line.endswith(message), line
    assert not out.exists()
