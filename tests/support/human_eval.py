"""Shared by the human-eval tests: a batch made, rated by rule, written as the platforms'
CSV files, and imported."""

from __future__ import annotations

from pathlib import Path

from support.files import read_rows


def make_batch(invoke, batch_run, out, *extra):
    result = invoke("human-eval", "batch", batch_run, "-o", out, "--per-stratum", "5", *extra)
    assert result.exit_code == 0, result.output
    return read_rows(out / "items.jsonl")


def rate(item: dict, criterion: str, rater: str) -> int:
    """A simulated rater: controls as expected (r3 gets the easy negative wrong), real
    items by a fixed rule with a small per-rater offset."""
    if item["is_control"]:
        if rater == "r3" and item["control"] == "negative" and criterion == "quality":
            return 5
        return item["expected"][criterion]
    base = 3 + len(item["text_b"]) % 3  # 3, 4 or 5
    return max(1, base - (1 if rater == "r2" and item["position"] % 2 else 0))


def write_csv(path: Path, lines: list[str], encoding: str = "utf-8") -> Path:
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    return path


HEADER = "batch_id,item_id,rater_id,criterion,rating,answered_at"


def rated_batch(invoke, batch_run: Path, tmp_path: Path) -> Path:
    """A batch of the run rated by two raters (the `rate` rule), imported and reported."""
    batch = tmp_path / "batch"
    table = make_batch(invoke, batch_run, batch, "--raters", "2")
    files = []
    for b, rater in (("b01", "r1"), ("b02", "r2")):
        lines = [HEADER]
        for item in (r for r in table if r["batch_id"] == b):
            for c in ("quality", "fluency"):
                lines.append(f"{b},{item['item_id']},{rater},{c},{rate(item, c, rater)},")
        files.append(write_csv(tmp_path / f"{b}.csv", lines))
    assert invoke("human-eval", "import", batch, *files).exit_code == 0
    assert invoke("human-eval", "report", batch).exit_code == 0
    return batch
