"""Time `shiftbench publish` against a bare upload and tag, whole process, as paired ratios.

Both sides are commands a user would run, each a process of its own, against the local Hub
of the tests (tests/support/hub_server.py), started once on 127.0.0.1 in this process:

  A  `python -m shiftbench publish RUN --repo ... --version 1.0.0 -q`: folder checks, every
     config converted to Parquet and loaded once, croissant.json checked by mlcroissant,
     the card read back by datasets, manifest, one commit, the tag
  B  `python bench/hub_side.py FOLDER REPO v1.0.0`: huggingface_hub's create_repo,
     upload_folder and create_tag, nothing else

B uploads the very files publish uploads: before the pairs, this process builds each run's
release in memory (cards/release.py `build`, for the repository name A will publish to) and
writes it to a folder, untimed. Every run gets a repository of its own, and after each pair
the files at the tag of A's repository must equal, path for path and byte for byte, those
at the tag of B's. The runs are paired with the first side alternating, after an uncounted
warm-up run of each (bench/paired.py).

Three comparisons, each with the goal docs/benchmarks.md states (median of the ratios):
  parquet  publish (Parquet and Croissant, the default) vs the bare upload      <= 3.0
  jsonl    publish --format jsonl vs the bare upload of its files               <= 3.0
  no-op    publish of a version already published with this content vs the bare
           upload of the same files to a new repository                         <= 1.5
           (A's repository is published beforehand, untimed; A must commit nothing)

The local Hub answers each request on a kept-alive connection in about 40 ms (Python's
HTTP server sends a reply's head and body apart, and the client's delayed acknowledgement
holds the body), which stands in for a network round trip. Against the real Hub each round
trip and the upload cost more, so these ratios are the harsh end.

    python bench/bench_publish.py RUN_FOLDER [--compare parquet,jsonl,noop] [--pairs 4]

`--shiftbench-path DIR` puts DIR first on A's PYTHONPATH (to time another copy, such as a
checkout of an earlier commit; B and the prepared folders use this one).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from paired import Run, paired, run_process, shiftbench_env  # noqa: E402

TOKEN = "hf_benchFAKEtoken"
TAG = "v1.0.0"
GOALS = {"parquet": 3.0, "jsonl": 3.0, "noop": 1.5}
LABELS = {
    "parquet": "publish (Parquet)",
    "jsonl": "publish --format jsonl",
    "noop": "no-op re-publish",
}


def prepare(run: Path, repo: str, data_format: str, where: Path) -> None:
    """Write to `where` the files publish would upload for `repo` (built in this process)."""
    from shiftbench.cards.release import build

    release, _, _ = build(run, repo, TAG, data_format=data_format)
    for path, item in release.files.items():
        target = where / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(item, bytes):
            target.write_bytes(item)
        else:
            shutil.copyfile(item, target)


def held_files(hub, repo: str) -> dict[str, bytes]:
    """The files at the tag of `repo` on the local Hub."""
    commit = hub.repos[repo].resolve(TAG) if repo in hub.repos else None
    if commit is None:
        raise RuntimeError(f"{repo} has no tag {TAG} on the local Hub")
    return commit.files


def differences(a: dict[str, bytes], b: dict[str, bytes]) -> str | None:
    """None when both hold the same paths with the same bytes, else what differs."""
    only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
    changed = sorted(p for p in a.keys() & b.keys() if a[p] != b[p])
    parts = [
        f"{label}: {', '.join(paths[:3])}"
        for label, paths in (("only A", only_a), ("only B", only_b), ("different", changed))
        if paths
    ]
    return "; ".join(parts) or None


def compare(
    kind: str, run: Path, hub, pairs: int, warmup: int, scratch: Path, env_a: dict | None
) -> None:
    from huggingface_hub import HfApi

    data_format = "jsonl" if kind == "jsonl" else "parquet"
    runs = warmup + pairs  # each side's runs, in order: warm-ups, then one per pair
    names_a = [f"bench/{kind}-{k}" for k in range(runs)]
    names_b = [f"bench/{kind}-bare-{k}" for k in range(runs)]
    folders = [scratch / f"{kind}-{k}" for k in range(runs)]
    for name, folder in zip(names_a, folders, strict=True):
        prepare(run, name, data_format, folder)
    seeded: dict[str, int] = {}  # no-op: A's repository -> its commits before A ran
    if kind == "noop":  # A finds its version published already
        api = HfApi(endpoint=hub.url, token=TOKEN)
        for name, folder in zip(names_a, folders, strict=True):
            api.create_repo(name, repo_type="dataset")
            info = api.upload_folder(repo_id=name, folder_path=folder, repo_type="dataset")
            api.create_tag(name, tag=TAG, revision=info.oid, repo_type="dataset")
            seeded[name] = len(hub.repos[name].commits)
    files = sum(1 for p in folders[0].rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in folders[0].rglob("*") if p.is_file())

    a = [sys.executable, "-m", "shiftbench", "publish", str(run), "--repo", "{repo}",
         "--version", TAG.removeprefix("v"), "-q"]  # fmt: skip
    if kind == "jsonl":
        a += ["--format", "jsonl"]
    b = [sys.executable, str(HERE / "hub_side.py"), "{folder}", "{repo}", TAG]
    used: dict[Path, str] = {}  # a run's output folder -> the repository it published
    count = {"A": 0, "B": 0}

    def runner(argv: Sequence[str], out: Path, env: dict[str, str] | None) -> Run:
        side = "A" if argv is a else "B"
        k = count[side]
        count[side] += 1
        repo = (names_a if side == "A" else names_b)[k]
        used[out] = repo
        filled = [x.replace("{repo}", repo).replace("{folder}", str(folders[k])) for x in argv]
        return run_process(filled, out, env)

    def same(ours: Run, theirs: Run) -> str | None:
        repo = used[ours.out]
        if kind == "noop" and len(hub.repos[repo].commits) != seeded[repo]:
            return f"the re-publish of {repo} committed: its version was not found unchanged"
        return differences(held_files(hub, used[ours.out]), held_files(hub, used[theirs.out]))

    label = f"{LABELS[kind]}: A = shiftbench publish, B = create_repo + upload_folder + create_tag"
    report = paired(
        label, a, b, pairs, same, env_a=env_a, runner=runner, scratch=scratch, warmup=warmup
    )
    print(f"{kind}: {files} files, {size / 1000:.1f} kB at the tag on both sides", flush=True)
    for line in report.lines(goal=GOALS[kind]):
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run folder written by shiftbench gen")
    parser.add_argument(
        "--compare", default="parquet,jsonl,noop", help="comma-separated: parquet, jsonl, noop"
    )
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs of each side")
    parser.add_argument("--shiftbench-path", help="put this first on A's PYTHONPATH")
    args = parser.parse_args()
    kinds = [k for k in args.compare.split(",") if k]
    unknown = [k for k in kinds if k not in GOALS]
    if unknown:
        parser.error(f"--compare: unknown {', '.join(unknown)}; choose from {', '.join(GOALS)}")
    print(" ".join(sys.argv), flush=True)

    from support.hub_server import LocalHub

    hub = LocalHub(TOKEN).start()
    with tempfile.TemporaryDirectory() as scratch:
        # both sides: this Hub, its token, and a Hub cache of their own
        os.environ.update(
            HF_ENDPOINT=hub.url, HF_TOKEN=TOKEN, HF_HUB_DISABLE_TELEMETRY="1",
            HF_HOME=str(Path(scratch) / "hf-home"),
        )  # fmt: skip
        os.environ.pop("HF_HUB_OFFLINE", None)
        env_a = shiftbench_env(args.shiftbench_path)
        files = sum(1 for p in args.run.rglob("*") if p.is_file())
        print(f"run folder: {args.run} ({files} files); local Hub at {hub.url}", flush=True)
        try:
            for kind in kinds:
                compare(kind, args.run, hub, args.pairs, args.warmup, Path(scratch), env_a)
        finally:
            hub.stop()


if __name__ == "__main__":
    main()
