"""The scoring protocol is an object: it writes results.json's `protocol` record key by key
and reads it back, an older record's missing keys taken from its named preset."""

from shiftbench.core.protocols import ScoringProtocol, scoring_protocol


def test_the_record_results_json_holds_reads_back_as_the_same_protocol():
    scoring = scoring_protocol("hteb", {"protocol": {"name": "shiftbench"}})
    record = scoring.record()
    assert list(record) == [
        "name", "classification_scoring", "retrieval_scoring", "failed_rows",
        "clustering_scoring", "subsets", "precision", "main_scores", "chosen_by",
        "run_folder_protocol", "overrides_run_folder",
    ]  # fmt: skip
    assert (record["chosen_by"], record["run_folder_protocol"]) == ("--protocol", "shiftbench")
    assert record["overrides_run_folder"] is True
    assert record["subsets"] == "pooled" and record["precision"] == "bfloat16"
    assert ScoringProtocol.from_results({"protocol": record}) == scoring


def test_an_older_record_takes_its_presets_choices_and_none_means_no_protocol():
    older = ScoringProtocol.from_results({"protocol": {"name": "hteb"}})
    assert older is not None
    assert (older.failed_rows, older.clustering_scoring) == ("original-in-place", "evaluation-seed")
    assert older.main_scores["Retrieval"] == "cosine_ndcg_at_10"
    assert ScoringProtocol.from_results({}) is None
