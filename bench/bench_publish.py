"""Cost of `shiftbench publish` against a bare upload of the same folder, in one run.

Starts the local Hub of the tests (tests/support/hub_server.py) on 127.0.0.1 and times, on a run
folder written by `shiftbench gen`:
  anchor      huggingface_hub's `upload_folder` of the folder plus `create_tag`: what a
              release costs without any checking
  publish     `shiftbench publish`: folder checks, every config converted to Parquet and
              loaded once, croissant.json written and read back by mlcroissant, the card
              written and read back by datasets, manifest, one commit and the tag
  jsonl       the same with --format jsonl (no conversion, no Croissant)
  no-op       publishing the same version again (the manifest downloaded, its inputs
              compared with those of the folder; nothing built)
Printed: seconds (median of --repeat runs) and each as a ratio to the anchor.

The local Hub answers each request on a kept-alive connection in about 40 ms (Python's
HTTP server sends a reply's head and body apart, and the client's delayed acknowledgement
holds the body), which stands in for a network round trip: the anchor makes 5 requests, a
publish to a new repository 6 (its refs first), a no-op republish 3. Against the real Hub
each round trip and the upload cost more, so these ratios are the harsh end.

    python bench/bench_publish.py RUN_FOLDER [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

TOKEN = "hf_benchFAKEtoken"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from support.hub_server import LocalHub

    hub = LocalHub(TOKEN).start()
    os.environ.update(HF_ENDPOINT=hub.url, HF_TOKEN=TOKEN, HF_HUB_DISABLE_TELEMETRY="1")
    os.environ.pop("HF_HUB_OFFLINE", None)

    from huggingface_hub import HfApi

    from shiftbench.cards.api import ReleaseSettings
    from shiftbench.cards.publish import publish

    api = HfApi(endpoint=hub.url, token=TOKEN)
    parquet, jsonl = ReleaseSettings(), ReleaseSettings(data_format="jsonl")
    timings: dict[str, list[float]] = {"anchor": [], "publish": [], "jsonl": [], "no-op": []}
    for k in range(args.repeat):
        repo = f"bench/anchor-{k}"
        start = time.perf_counter()
        api.create_repo(repo, repo_type="dataset")
        info = api.upload_folder(repo_id=repo, folder_path=args.run, repo_type="dataset")
        api.create_tag(repo, tag="v1.0.0", revision=info.oid, repo_type="dataset")
        timings["anchor"].append(time.perf_counter() - start)

        repo = f"bench/release-{k}"
        start = time.perf_counter()
        publish(args.run, repo, "v1.0.0", parquet, quiet=True)
        timings["publish"].append(time.perf_counter() - start)
        start = time.perf_counter()
        publish(args.run, f"bench/jsonl-{k}", "v1.0.0", jsonl, quiet=True)
        timings["jsonl"].append(time.perf_counter() - start)
        start = time.perf_counter()
        assert publish(args.run, repo, "v1.0.0", parquet, quiet=True) == "unchanged"
        timings["no-op"].append(time.perf_counter() - start)
    hub.stop()

    anchor = statistics.median(timings["anchor"])
    files = sum(1 for p in args.run.rglob("*") if p.is_file())
    print(f"run folder: {args.run} ({files} files); median of {args.repeat} runs")
    print(f"{'step':<8} {'seconds':>8} {'ratio':>7}")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"{name:<8} {median:>8.2f} {median / anchor:>7.2f}")


if __name__ == "__main__":
    main()
