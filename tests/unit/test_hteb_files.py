"""HTEB's transformation files: folder names, file-name hashes, and which pair of a folder
is read, checked as HTEB's own loader checks it."""

from __future__ import annotations

import random

import pytest
from support.hteb import MODEL, statistics, write_pair

from shiftbench.core.data.hteb import (
    HTEB_NAMES,
    TRANSFORMATIONS,
    cross_translation_target,
    generator_directory,
    generator_model,
    identity_hash,
    latest_pair,
    read_pair,
    record_languages,
    target_pool,
    text_ordinals,
    translation_target,
)
from shiftbench.errors import InputError

ROWS = [
    {"text": "I lost my card", "label": 1, "_hteb_split": "test"},
    {"text": "How do I top up?", "label": 2, "_hteb_split": "test"},
]
REWRITTEN = [
    {"text": "My card is gone", "label": 1, "_hteb_split": "test"},
    {"text": "How can I add money?", "label": 2, "_hteb_split": "test"},
]


def test_generator_folders_are_named_as_hteb_names_them():
    assert generator_directory(MODEL) == "cyankiwi~2Fgemma-4-31B-it-AWQ-4bit"  # its release
    cases = {"a~b": "a~7Eb", "con.x": "~63on.x", "a..": "a~2E~2E", "é/x": "~C3~A9~2Fx"}
    for model, folder in cases.items():
        assert generator_directory(model) == folder
        assert generator_model(folder) == model
    assert generator_model(generator_directory(MODEL)) == MODEL


def test_file_hashes_are_those_of_htebs_published_banking77_files():
    """Three of the 24 pairs HTEB ships for Banking77: the first 12 hex digits of their
    file names, from the identity and the generation time."""
    published = {
        ("backtranslation", 1337, "2026-09-15T11:18:02Z"): "9be5eb2759c8",
        ("translation", 1337, "2026-09-15T11:32:54Z"): "c46cda2f3acf",
        ("summarised_expansion", 1339, "2026-09-15T14:04:09Z"): "639df8c32e4a",
    }
    for (transformation, seed, when), prefix in published.items():
        assert identity_hash(MODEL, transformation, "banking77", seed, when)[:12] == prefix


# HTEB's target languages by name, in its order (hteb/generation.py), and their codes
HTEB_TARGETS = {"Spanish": "es", "French": "fr", "German": "de", "Turkish": "tr", "Arabic": "ar"}


def test_translation_targets_follow_htebs_rules():
    """translation: one language per dataset and seed, from the same settings hash as the
    file names above (which reproduce HTEB's published names): Banking77's three seeds go
    into Turkish, Turkish and Arabic. cross_translation: each text's own draw, worked out
    here with random.Random over HTEB's names. Neither ever picks the text's own
    language, and the whole pool is used when nothing else is left."""
    assert [translation_target("banking77", s, ["en"]) for s in (1337, 1338, 1339)] == [
        "tr", "tr", "ar",
    ]  # fmt: skip
    names = list(HTEB_TARGETS)
    for seed, ordinal in ((1337, 0), (1338, 5), (1339, 41)):
        expected = HTEB_TARGETS[random.Random(seed + ordinal).choice(names)]
        assert cross_translation_target(seed, ordinal, ["en"]) == expected
        without = [n for n in names if n != "Turkish"]
        expected = HTEB_TARGETS[random.Random(seed + ordinal).choice(without)]
        assert cross_translation_target(seed, ordinal, ["tr"]) == expected
    assert "de" not in {translation_target(d, 7, ["de"]) for d in ("a", "b", "c", "d", "e")}
    assert target_pool(["es", "fr", "de", "tr", "ar"]) == ("es", "fr", "de", "tr", "ar")
    assert record_languages("eng", None) == ("en",)
    assert record_languages("en-de", 0) == ("en",) and record_languages("en-de", 1) == ("de",)
    assert record_languages("en-de", None) == ("en", "de") and record_languages(None, 0) == ()


def test_texts_are_numbered_as_hteb_numbers_them():
    """Non-blank texts only; a pair task's first texts of every record before its second
    texts; otherwise record by record."""
    records = [{"a": "x", "b": "y"}, {"a": " ", "b": "z"}, {"a": "w", "b": ""}]
    assert text_ordinals(records, ("a", "b"), pair_task=True) == {
        (0, "a"): 0, (2, "a"): 1, (0, "b"): 2, (1, "b"): 3,
    }  # fmt: skip
    assert text_ordinals(records, ("a", "b"), pair_task=False) == {
        (0, "a"): 0, (0, "b"): 1, (1, "b"): 2, (2, "a"): 3,
    }  # fmt: skip


def test_transformation_names_map_both_ways():
    assert TRANSFORMATIONS["paraphrasing"] == "paraphrase"
    assert TRANSFORMATIONS["summarise"] == "summarisation"
    assert TRANSFORMATIONS["cross_translation"] == "cross-translation"
    assert {HTEB_NAMES[ours] for ours in TRANSFORMATIONS.values()} == set(TRANSFORMATIONS)


def test_the_newest_pair_wins_and_an_undated_one_loses(tmp_path):
    write_pair(tmp_path, "banking77", "paraphrasing", 1337, ROWS, ROWS, generated=None)
    write_pair(tmp_path, "banking77", "paraphrasing", 1337, ROWS, ROWS,
               generated="2026-09-15T11:17:23Z")  # fmt: skip
    newest, _ = write_pair(tmp_path, "banking77", "paraphrasing", 1337, ROWS, REWRITTEN,
                           generated="2026-09-16T08:00:00Z")  # fmt: skip
    pair = latest_pair(newest.parent)
    assert pair.data == newest
    assert read_pair(pair) == (ROWS, REWRITTEN)
    folder = newest.parent
    for path in list(folder.iterdir()):
        if "data_" in path.name or "metadata_" in path.name:
            path.unlink()
    assert latest_pair(folder).data.name == "data.parquet"  # alone, the undated pair is read


def _move_in_another_generators_pair(root):
    write_pair(root, "banking77", "summarise", 1, ROWS, REWRITTEN, model="other/model")
    # the other model's pair, moved beside the first: it describes another folder
    src = root / generator_directory("other/model") / "banking77" / "summarise" / "1"
    dst = root / generator_directory(MODEL) / "banking77" / "summarise" / "1"
    for path in src.iterdir():
        path.rename(dst / path.name)


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("metadata only", "{data}: missing or not a regular file, so {meta_name} has no pair"),
        ("stray data file", "{folder}/data_old.parquet: not an HTEB data file name "
         "(data_<64 hex>.parquet)"),
        ("wrong seed folder", "{moved_meta}: it describes "
         "cyankiwi~2Fgemma-4-31B-it-AWQ-4bit/banking77/summarise/1, but lies in "
         "cyankiwi~2Fgemma-4-31B-it-AWQ-4bit/banking77/summarise/2"),
        ("extra key", "{meta}: keys HTEB does not write: schema_version"),
        ("rows miscounted", "{data}: holds 2 rows, its metadata counts 3"),
        ("reasons miscounted", "{meta}: generation_statistics: fallback_reasons do not add "
         "up to text_fields_with_fallback"),
        ("another generator's pair", "{other_meta}: it describes "
         "other~2Fmodel/banking77/summarise/1, but lies in "
         "cyankiwi~2Fgemma-4-31B-it-AWQ-4bit/banking77/summarise/1"),
    ],
)  # fmt: skip
def test_a_pair_hteb_would_refuse_is_refused_in_one_line(tmp_path, case, message):
    data, meta = write_pair(tmp_path, "banking77", "summarise", 1, ROWS, REWRITTEN)
    folder = data.parent
    names = {"data": data, "meta": meta, "meta_name": meta.name, "folder": folder}
    if case == "metadata only":
        data.unlink()
    elif case == "stray data file":
        (folder / "data_old.parquet").write_bytes(data.read_bytes())
    elif case == "wrong seed folder":
        moved = folder.parent / "2"
        folder.rename(moved)
        folder = moved
        names["moved_meta"] = moved / meta.name
    elif case == "extra key":
        write_pair(tmp_path, "banking77", "summarise", 1, ROWS, REWRITTEN, schema_version=3)
    elif case == "rows miscounted":
        write_pair(tmp_path, "banking77", "summarise", 1, ROWS, REWRITTEN,
                   stats=statistics(3, 3))  # fmt: skip
    elif case == "reasons miscounted":
        stats = statistics(2, 2, fallback=1)
        stats["fallback_reasons"] = {"backend_failure": 2}
        write_pair(tmp_path, "banking77", "summarise", 1, ROWS, REWRITTEN, stats=stats)
    elif case == "another generator's pair":
        _move_in_another_generators_pair(tmp_path)
        other = [p for p in folder.glob("metadata_*.JSON") if p != meta]
        names["other_meta"] = other[0]
    with pytest.raises(InputError) as refused:
        pair = latest_pair(folder)
        read_pair(pair)
    assert str(refused.value) == message.format(**names)


def filtering(kept: int, task_type: str = "classification") -> dict:
    """data_filtering as HTEB's current filter writes it (version 2, nothing excluded)."""
    return {
        "version": 2, "task_type": task_type, "input_scope": "source_records",
        "counts_before": {"records": kept}, "counts_after": {"records": kept},
        "excluded": [], "excluded_documents": [], "excluded_candidates": [],
    }  # fmt: skip


def test_the_shape_of_htebs_published_banking77_metadata_is_accepted(tmp_path):
    """The keys and kinds of HTEB's banking77/translation/1337 metadata (one text fell back
    for its output length), on three records: accepted, and named as HTEB named it."""
    rows = [*ROWS, {"text": "Why was I charged twice?", "label": 3, "_hteb_split": "test"}]
    changed = [{**r, "text": f"[tr] {r['text']}"} for r in rows]
    changed[2]["text"] = ""
    stats = statistics(3, 3, fallback=1)
    data, _ = write_pair(tmp_path, "banking77", "translation", 1337, rows, changed,
                         generated="2026-09-15T11:32:54Z", stats=stats,
                         data_filtering=filtering(3),
                         source_revision="18072d2685ea682290f7b8924d94c62acc19c0b2",
                         translation_language_selection="dataset")  # fmt: skip
    pair = latest_pair(data.parent)
    assert pair.data.name.startswith("data_c46cda2f3acf")  # HTEB's own file name
    assert read_pair(pair)[1][2]["text"] == ""


@pytest.mark.parametrize(
    ("report", "message"),
    [
        (filtering(2, "sts"), "data_filtering: task_type must be the dataset's, classification"),
        ({**filtering(2), "version": 3}, "data_filtering: version must be 1 or 2"),
        ({**filtering(2), "excluded": [{"row_index": 0, "reason": "empty_text"}]},
         "data_filtering: a classification dataset excludes no record"),
        ({**filtering(2), "counts_before": {"records": 1}},
         "data_filtering: the counts after filtering must be some, and no more than before"),
    ],
)  # fmt: skip
def test_a_data_filter_report_hteb_would_refuse_is_refused(tmp_path, report, message):
    data, meta = write_pair(tmp_path, "banking77", "paraphrasing", 1, ROWS, REWRITTEN,
                            data_filtering=report)  # fmt: skip
    with pytest.raises(InputError) as refused:
        latest_pair(data.parent)
    assert str(refused.value) == f"{meta}: {message}"


def test_a_file_holding_other_rows_than_its_filter_kept_is_refused(tmp_path):
    report = {**filtering(3), "counts_before": {"records": 4}}
    data, _ = write_pair(tmp_path, "banking77", "paraphrasing", 1, ROWS, REWRITTEN,
                         data_filtering=report)  # fmt: skip
    with pytest.raises(InputError) as refused:
        read_pair(latest_pair(data.parent))
    assert str(refused.value) == f"{data}: holds 2 rows, its data filter kept 3"
