"""hteb export writes the generator's context as the run recorded it: Ollama's num_ctx (on
the run's model record) or vllm's max_model_len (on its backend record), HTEB's default
8192 only where the run recorded none (it wrote 8192 for every run)."""

from __future__ import annotations

import pytest

from shiftbench.cards.hteb_pairs import DEFAULT_CONTEXT, ConfigPair, made_metadata
from shiftbench.core.data.hteb import latest_pair


def test_an_ollama_runs_context_is_the_pairs_max_model_length(
    shared_data, ollama_stub, invoke, tmp_path
):
    run, out = tmp_path / "run", tmp_path / "transformations"
    made = invoke(
        "gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit", "3",
        "-t", "paraphrase", "-s", "7", "-b", "ollama", "--base-url", ollama_stub.url,
        "-m", "stub", "--num-ctx", "4096", "-q", "-o", run,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    result = invoke("hteb", "export", run, "-o", out, "--generator", "org/stub")
    assert result.exit_code == 0, result.output
    pair = latest_pair(out / "org~2Fstub" / "stsbenchmark-sts" / "paraphrasing" / "7")
    assert pair.metadata["max_model_length"] == 4096


@pytest.mark.parametrize(
    ("model_record", "backend_record", "length"),
    [
        ({"id": "m", "num_ctx": 4096}, {"name": "ollama"}, 4096),
        ({"id": "m"}, {"name": "vllm", "max_model_len": 2048}, 2048),
        ({"id": "m"}, {"name": "embedded"}, DEFAULT_CONTEXT),
    ],
)
def test_the_recorded_context_is_read_from_where_each_backend_records_it(
    model_record, backend_record, length
):
    info = {"transform": "paraphrase", "seed": 7, "model": model_record, "backend": backend_record}
    config = ConfigPair("paraphrase-s7", info, "org/m", [], [])
    doc = made_metadata(config, "stsbenchmark-sts", {}, None)
    assert doc["max_model_length"] == length
