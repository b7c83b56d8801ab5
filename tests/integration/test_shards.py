"""A run split with --shard and put together with merge equals a single-machine run."""

from __future__ import annotations

import json


def files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_merged_shards_equal_a_single_run(scripted, invoke, tmp_path):
    args = [
        "gen",
        "sample",
        "-t",
        "paraphrase",
        "-t",
        "cross-translation",
        "--seeds",
        "1,2",
        "-b",
        "scripted",
        "-q",
    ]
    assert invoke(*args, "-o", tmp_path / "single").exit_code == 0
    shards = [tmp_path / f"shard{i}" for i in range(3)]
    for i, folder in enumerate(shards):
        result = invoke(*args, "--shard", f"{i}/3", "-o", folder)
        assert result.exit_code == 0, result.output
        meta = json.loads((folder / "shiftbench.json").read_text())
        assert meta["shard"] == {"index": i, "count": 3}
        rows = (folder / "original" / "test.jsonl").read_text().splitlines()
        assert all(json.loads(r)["row_id"] % 3 == i for r in rows)
    result = invoke("merge", shards[2], shards[0], shards[1], "-o", tmp_path / "merged")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"merged 3 shards into {tmp_path / 'merged'}: original, ")
    assert files(tmp_path / "merged") == files(tmp_path / "single")


def test_merge_refuses_incomplete_or_mismatched_shards(scripted, invoke, tmp_path):
    base = ["gen", "sample", "--limit", "6", "-b", "scripted", "-q"]
    for i in range(2):
        assert invoke(*base, "--shard", f"{i}/2", "-o", tmp_path / f"s{i}").exit_code == 0
    assert invoke(*base, "--shard", "1/2", "-s", "9", "-o", tmp_path / "other").exit_code == 0
    out = tmp_path / "merged"
    result = invoke("merge", tmp_path / "s0", "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: a merge needs shards 0 to 1 once each; given: 0\n",
    )
    result = invoke("merge", tmp_path / "s0", tmp_path / "other", "-o", out)
    assert (result.exit_code, result.stderr) == (
        2,
        f"Error: {tmp_path / 'other'} was made with other settings than {tmp_path / 's0'} "
        f"(config paraphrase-s9 only in {tmp_path / 'other'}, config paraphrase-s1337 only in "
        f"{tmp_path / 's0'})\n",
    )
    result = invoke(*base, "--shard", "2/2", "-o", tmp_path / "bad")
    assert (result.exit_code, result.stderr) == (2, "Error: --shard 2/2: I must be from 0 to N-1\n")
    assert not out.exists()
