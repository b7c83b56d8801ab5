"""cards: dataset cards, and frozen versions published to a local Hub and loaded back.

The Hub is tests/support/hub_server.py on 127.0.0.1; shiftbench, huggingface_hub and datasets
reach it through HF_ENDPOINT in subprocesses, as a user's shell would.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.cards import REPO
from support.environment import ENCODER
from support.files import read_rows
from support.hub_server import HANG, LocalHub
from support.human_eval import rated_batch

from shiftbench.cards.croissant import RAI_FIELDS
from shiftbench.cards.publish import human_size
from shiftbench.core.evidence import THIN_NOTE, width_places

FAKE_TOKEN = "hf_shiftbenchFAKEtokenNeverToBeShown0042"


@pytest.fixture
def hub():
    with LocalHub(FAKE_TOKEN) as server:
        yield server


def hub_env(hub: LocalHub, tmp_path: Path, token: str | None = FAKE_TOKEN) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(
        HF_ENDPOINT=hub.url,
        HF_HOME=str(tmp_path / "hf-home"),
        HF_DATASETS_CACHE=str(tmp_path / "hf-datasets"),
        SHIFTBENCH_HUB_RETRY_WAIT="0.01",
        HF_HUB_DISABLE_TELEMETRY="1",
    )
    if token:
        env["HF_TOKEN"] = token
    return env


def shiftbench(env: dict[str, str], *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shiftbench", *map(str, args)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def python(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def load_rows(env: dict[str, str], config: str, revision: str) -> list[dict]:
    """The rows of a published config, through load_dataset in a fresh process."""
    done = python(
        env,
        f"""
        import json
        from datasets import load_dataset
        ds = load_dataset({REPO!r}, {config!r}, revision={revision!r}, split="test")
        print(json.dumps(ds.to_list()))
        """,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def tags(hub: LocalHub) -> dict[str, str]:
    return dict(hub.repos[REPO].tags) if REPO in hub.repos else {}


def test_gen_keeps_the_citation_so_a_card_needs_no_mteb(stsb_copy, shared_data, invoke):
    """gen records mteb's BibTeX of the task in shiftbench.json, so card and publish cite
    it without importing mteb (seconds in every process); a run folder made before that
    still cites through mteb, and gen still adds configs to it."""
    import mteb

    meta_file = stsb_copy / "shiftbench.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    citation = mteb.get_task("STSBenchmark").metadata.bibtex_citation.strip()
    assert meta["source"]["citation"] == citation
    card = stsb_copy / "card.md"
    code = (
        "import sys\n"
        "from shiftbench.cli import cli\n"
        f"cli.main(['card', {str(stsb_copy)!r}, '-o', {str(card)!r}], standalone_mode=False)\n"
        "print('mteb' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "False"), done.stderr
    assert citation in card.read_text(encoding="utf-8")

    del meta["source"]["citation"]  # a folder from before
    meta_file.write_text(json.dumps(meta), encoding="utf-8")
    assert invoke("card", stsb_copy, "-o", card).exit_code == 0
    assert citation in card.read_text(encoding="utf-8")
    common = ["--data-dir", shared_data / "STSBenchmark", "--limit", "20", "-b", "scripted"]
    added = invoke("gen", "STSBenchmark", *common, "-t", "paraphrase", "-s", "3", "-q",
                   "-o", stsb_copy)  # fmt: skip
    assert added.exit_code == 0, added.output
    assert "paraphrase-s3" in json.loads(meta_file.read_text(encoding="utf-8"))["configs"]


def test_round_trip_two_versions(stsb_copy, shared_data, invoke, hub, tmp_path):
    env = hub_env(hub, tmp_path)
    old = {c: read_rows(stsb_copy / c / "test.jsonl") for c in ("paraphrase-s1", "translation-s1")}
    batch = rated_batch(invoke, stsb_copy, tmp_path)
    done = shiftbench(
        env,
        "publish",
        stsb_copy,
        "--repo",
        REPO,
        "--version",
        "1.0.0",
        "--human-eval",
        batch,
    )
    assert done.returncode == 0, done.stderr
    v1 = tags(hub)["v1.0.0"]
    summary = json.loads(hub.repos[REPO].commits[v1].files["human_eval/batch.json"])
    assert summary["raters_kept"] == 2 and not {"raters", "kept_raters", "run"} & set(summary)
    assert f"published {REPO}@v1.0.0 (commit {v1})" in done.stdout
    assert f'load_dataset("{REPO}", "translation-s1", revision="v1.0.0")' in done.stdout
    for config, rows in old.items():
        assert load_rows(env, config, "v1.0.0") == rows

    # v1.1.0: paraphrase-s1 made again by another generator; the rest unchanged.
    result = invoke(
        "gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit", "20",
        "-b", "scripted", "-m", "halves", "-q", "-t", "paraphrase", "-s", "1", "--overwrite",
        "-o", stsb_copy,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    new = read_rows(stsb_copy / "paraphrase-s1" / "test.jsonl")
    assert new != old["paraphrase-s1"]
    plan = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.1.0", "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert f"repository {REPO}: exists; the release becomes a new commit on main" in plan.stdout
    assert ["human_eval/batch.json", "(delete)"] in [
        line.split() for line in plan.stdout.splitlines()
    ]
    assert plan.stdout.splitlines()[-1].endswith("; 1 deleted")
    done = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.1.0")
    assert done.returncode == 0, done.stderr
    assert tags(hub)["v1.0.0"] == v1 != tags(hub)["v1.1.0"]
    # v1.1.0 has no human-eval summary: deleted on main, still part of v1.0.0.
    assert "human_eval/batch.json" not in hub.repos[REPO].commits[tags(hub)["v1.1.0"]].files
    assert load_rows(env, "paraphrase-s1", "v1.0.0") == old["paraphrase-s1"]
    assert load_rows(env, "paraphrase-s1", "v1.1.0") == new
    for version in ("v1.0.0", "v1.1.0"):
        done = shiftbench(env, "verify", f"{REPO}@{version}")
        assert done.returncode == 0, done.stderr
        assert "verified: every file matches the manifest" in done.stdout
    manifest = json.loads(hub.repos[REPO].commits[v1].files["shiftbench-release.json"])
    assert manifest["version"] == "v1.0.0"
    assert manifest["source"]["revision"] == "b0fddb56ed78048fa8b90373c8a3cfc37b684831"
    listed = {f["path"] for f in manifest["files"]}
    assert {"README.md", "shiftbench.json", "validation.json", "original/test.parquet"} <= listed
    assert "croissant.json" in listed and not any(p.endswith("test.jsonl") for p in listed)
    assert manifest["data_format"] == "parquet"
    assert set(hub.repos[REPO].commits[v1].files) == listed | {
        "shiftbench-release.json",
        ".gitattributes",
    }


def test_a_republish_of_the_same_inputs_builds_nothing(stsb_copy, hub, tmp_path):
    """A version published again from the same files and options is found unchanged from
    the manifest's `inputs`, without building the release; a folder that changed is built
    and compared file by file, as before."""
    done = python(
        hub_env(hub, tmp_path),
        f"""
        from pathlib import Path
        from shiftbench.cards import publish as p
        from shiftbench.cards.api import ReleaseSettings

        run, built = Path({str(stsb_copy)!r}), []
        real_build = p.build

        def counted(*args, **kwargs):
            built.append(1)
            return real_build(*args, **kwargs)

        p.build = counted
        for step in ("first", "again", "card changed"):
            if step == "card changed":  # the release replaces the folder's README.md
                (run / "README.md").write_text("an edited card\\n", encoding="utf-8")
            outcome = p.publish(run, {REPO!r}, "v1.0.0", ReleaseSettings(), quiet=True)
            print(step, outcome, len(built))
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "first published 1",
        "again unchanged 1",
        "card changed unchanged 2",
    ]
    manifest = json.loads(
        (hub.repos[REPO].resolve("v1.0.0").files["shiftbench-release.json"]).decode()
    )
    assert len(manifest["inputs"]) == 64


def test_only_a_repository_made_by_this_publish_is_committed_to_unread(stsb_copy, hub, tmp_path):
    """A repository publish has just created holds only the Hub's .gitattributes, so its
    first commit reads nothing first. A repository that was there (a later version, or a
    create whose answer was lost and that a retry found made) is read first: its head is
    the commit's parent and its stale files are deleted."""
    env = hub_env(hub, tmp_path)
    other = f"{REPO}-other"

    def reads(repo: str) -> int:
        path = f"/api/datasets/{repo}/revision/main"
        return sum(1 for method, p, _ in hub.requests if (method, p) == ("GET", path))

    for version in ("1.0.0", "1.0.1"):
        done = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", version, "-q")
        assert done.returncode == 0, done.stderr
        assert reads(REPO) == (0 if version == "1.0.0" else 1)
    hub.fail("create", 500, times=1, after_apply=True)
    done = shiftbench(env, "publish", stsb_copy, "--repo", other, "--version", "1.0.0", "-q")
    assert done.returncode == 0, done.stderr
    assert reads(other) == 1
    assert set(tags(hub)) == {"v1.0.0", "v1.0.1"} and set(hub.repos[other].tags) == {"v1.0.0"}
    for repo in (REPO, other):
        held = hub.repos[repo].resolve("v1.0.0").files
        assert set(held) == {".gitattributes", *hub.repos[REPO].resolve("v1.0.1").files}


def test_published_versions_are_frozen(stsb_copy, invoke, hub, tmp_path):
    env = hub_env(hub, tmp_path)
    assert (
        shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0").returncode == 0
    )
    commits = len(hub.repos[REPO].commits)
    again = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0")
    assert again.returncode == 0, again.stderr
    assert f"{REPO}@v1.0.0 is already published with this content; nothing to do." in again.stdout
    assert len(hub.repos[REPO].commits) == commits

    path = stsb_copy / "paraphrase-s2" / "test.jsonl"
    rows = read_rows(path)
    rows[0]["sentence1"] = "changed by hand"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    before = tags(hub)
    refused = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        f"Error: {REPO}@v1.0.0 is already published with other content (3 changed: "
        "README.md, croissant.json, paraphrase-s2/test.parquet); published versions are "
        "frozen: publish a new --version"
    )
    assert tags(hub) == before and len(hub.repos[REPO].commits) == commits


def test_dry_run_prints_the_plan_and_touches_nothing(stsb_copy, hub, tmp_path):
    env = hub_env(hub, tmp_path, token=None)  # a dry run needs no token
    before = sorted(p.relative_to(stsb_copy) for p in stsb_copy.rglob("*"))
    card = (stsb_copy / "README.md").read_bytes()
    done = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "2.0.0", "--dry-run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "dry run: nothing is uploaded, created or tagged"
    assert lines[1] == (
        f"repository {REPO}: does not exist yet; it would be created (dataset repository)"
    )
    assert lines[2] == "target revision: main, then tag v2.0.0 on the new commit"
    listed = {line.split()[0]: " ".join(line.split()[1:]) for line in lines[3:-1]}
    assert listed["shiftbench.json"] == human_size((stsb_copy / "shiftbench.json").stat().st_size)
    # the data files go as Parquet, described by croissant.json
    in_folder = {p.relative_to(stsb_copy).as_posix() for p in stsb_copy.rglob("*") if p.is_file()}
    data = {p for p in in_folder if p.endswith("/test.jsonl") and "validation/" not in p}
    assert set(listed) == {
        *(in_folder - data), *(p.replace(".jsonl", ".parquet") for p in data),
        "shiftbench-release.json", "croissant.json",
    }  # fmt: skip
    assert lines[-1].startswith(f"{len(listed)} files, ")
    assert hub.writes() == [] and REPO not in hub.repos
    assert sorted(p.relative_to(stsb_copy) for p in stsb_copy.rglob("*")) == before
    assert (stsb_copy / "README.md").read_bytes() == card


def test_token_is_never_shown_or_written(stsb_copy, hub, tmp_path):
    env = hub_env(hub, tmp_path)
    outputs = []
    for args in (
        ["publish", stsb_copy, "--repo", REPO, "--version", "1.0.0", "--dry-run"],
        ["publish", stsb_copy, "--repo", REPO, "--version", "1.0.0"],
        ["verify", f"{REPO}@v1.0.0"],
        ["card", stsb_copy, "--repo", REPO, "--version", "1.0.0"],
    ):
        done = shiftbench({**env, "SHIFTBENCH_DEBUG": "1"}, *args)
        assert done.returncode == 0, done.stderr
        outputs += [done.stdout, done.stderr]
    hub.fail("commit", 500, times=5)  # the error path prints too: every attempt fails
    done = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.1")
    assert done.returncode == 1
    outputs += [done.stdout, done.stderr]
    assert all(FAKE_TOKEN not in text for text in outputs)
    for path in stsb_copy.rglob("*"):
        if path.is_file():
            assert FAKE_TOKEN.encode() not in path.read_bytes(), path
    for commit in hub.repos[REPO].commits.values():
        assert all(FAKE_TOKEN.encode() not in data for data in commit.files.values())
    # ... and it was what authorised every write.
    assert all(ok for method, _, ok in hub.requests if method == "POST")

    # A token stored by `hf auth login` (in HF_HOME) serves as well as HF_TOKEN.
    stored = hub_env(hub, tmp_path, token=None)
    Path(stored["HF_HOME"]).mkdir(parents=True, exist_ok=True)
    (Path(stored["HF_HOME"]) / "token").write_text(FAKE_TOKEN, encoding="utf-8")
    done = shiftbench(stored, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.2")
    assert done.returncode == 0, done.stderr
    assert "v1.0.2" in tags(hub) and FAKE_TOKEN not in done.stdout + done.stderr


def test_missing_token_and_bad_input_write_nothing(stsb_copy, hub, tmp_path):
    env = hub_env(hub, tmp_path, token=None)
    cases = [
        (["publish", stsb_copy, "--repo", REPO, "--version", "1.0"],
         "Error: --version must look like 1.0.0 (MAJOR.MINOR.PATCH), got '1.0'"),
        (["publish", stsb_copy, "--repo", "no-namespace", "--version", "1.0.0"],
         "Error: --repo must be ORG/NAME (a Hub dataset repository id), got 'no-namespace'"),
        (["publish", stsb_copy, "--repo", REPO, "--version", "1.0.0"],
         "Error: no Hugging Face token: set HF_TOKEN or log in with 'hf auth login' first"),
        (["publish", stsb_copy / "original", "--repo", REPO, "--version", "1.0.0"],
         f"Error: {stsb_copy / 'original'} is not a shiftbench run folder (no shiftbench.json)"),
        (["verify", REPO], f"Error: name the version to verify: ORG/NAME@vX.Y.Z, got '{REPO}'"),
    ]  # fmt: skip
    for args, message in cases:
        done = shiftbench(env, *args)
        assert (done.returncode, done.stderr.strip()) == (2, message)
    # A config whose rows lost a column is not what gen writes: refused before any upload.
    path = stsb_copy / "paraphrase-s1" / "test.jsonl"
    rows = [{k: v for k, v in r.items() if k != "status"} for r in read_rows(path)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = shiftbench({**env, "HF_TOKEN": FAKE_TOKEN}, *cases[2][0])
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "Error: config paraphrase-s1 lacks the columns status; it is not what shiftbench "
        "gen writes",
    )
    assert hub.writes() == []


def test_card_of_a_local_source(scripted, invoke, tmp_path):
    """A source that is no MTEB task: no Hub source named; the license is inherited."""
    from huggingface_hub import DatasetCard

    run = tmp_path / "run"
    assert invoke("gen", "sample", "-b", "scripted", "-q", "-o", run).exit_code == 0
    result = invoke("card", run)
    assert result.exit_code == 0, result.output
    data = DatasetCard.load(run / "README.md", repo_type="dataset").data.to_dict()
    assert data["license"] == "cc-by-4.0"  # the sample's own
    assert "source_datasets" not in data
    assert data["multilinguality"] == "monolingual"
    text = (run / "README.md").read_text(encoding="utf-8")
    assert "- License:" not in text
    assert str(tmp_path) not in text  # no local path in a card
    assert invoke("card", run, "--license", "Custom terms v2").exit_code == 0
    text = (run / "README.md").read_text(encoding="utf-8")
    assert "\nlicense: other\n" in text
    assert (
        "- License: The license is given as `Custom terms v2`, which is not a Hub license id."
    ) in text
    assert "This release was not validated with `shiftbench validate`." in text


def test_failures_midway_leave_no_tag_and_a_rerun_completes(stsb_copy, hub, tmp_path):
    env = hub_env(hub, tmp_path)
    publish = ["publish", stsb_copy, "--repo", REPO, "--version", "1.0.0"]

    # The commit keeps failing: retried, then given up, with no tag.
    hub.fail("commit", 503, times=5)
    done = shiftbench(env, *publish)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: publishing {REPO}@v1.0.0 failed at the commit (HTTP 503 from "
        f"/api/datasets/{REPO}/commit/main); no tag was made: run the same command again to "
        "complete the release"
    )
    assert done.stderr.count("commit: HTTP 503") == 4
    assert tags(hub) == {} and len(hub.repos[REPO].commits) == 1  # the repo's first commit

    # The commit lands but its answer is lost, then tagging fails: still no tag.
    hub.fail("commit", 500, times=1, after_apply=True)
    hub.fail("tag", 500, times=5)
    done = shiftbench(env, *publish)
    assert done.returncode == 1 and "failed at tagging" in done.stderr
    assert tags(hub) == {} and len(hub.repos[REPO].commits) == 2

    # The same command completes the release without a second commit of the same files.
    done = shiftbench(env, *publish)
    assert done.returncode == 0, done.stderr
    head = hub.repos[REPO].branches["main"]
    assert tags(hub) == {"v1.0.0": head} and len(hub.repos[REPO].commits) == 2
    assert shiftbench(env, "verify", f"{REPO}@v1.0.0").returncode == 0


def test_the_hubs_own_retry_warnings_show_once_and_not_under_quiet(stsb_copy, hub, tmp_path):
    """huggingface_hub retries an HTTP 500 of the pre-upload itself and warns through a
    handler of its own; mlcroissant (through absl) gives the root logger a handler as
    well, which once printed each warning twice. Each shows once, and -q shows none."""
    env = hub_env(hub, tmp_path)
    hub.fail("preupload", 500, times=1)
    loud = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0")
    assert loud.returncode == 0, loud.stderr
    lines = loud.stderr.splitlines()
    assert [line for line in lines if "Retry 1/5" in line] == ["Retrying in 1s [Retry 1/5]."]
    assert len([line for line in lines if "HTTP Error 500" in line]) == 1
    hub.fail("preupload", 500, times=1)
    quiet = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.1", "-q")
    assert (quiet.returncode, quiet.stderr, quiet.stdout) == (0, "", "")
    assert set(tags(hub)) == {"v1.0.0", "v1.0.1"}


def test_a_hub_that_stops_answering_ends_publish_in_one_line(stsb_copy, hub, tmp_path):
    """The Hub takes the commit and never answers: each try gives up after
    SHIFTBENCH_HUB_TIMEOUT seconds and is retried; after the last, one line (exit 1), no
    tag, and the same command completes the release once the Hub answers again."""
    env = {**hub_env(hub, tmp_path), "SHIFTBENCH_HUB_TIMEOUT": "1"}
    publish = ["publish", stsb_copy, "--repo", REPO, "--version", "1.0.0", "-q"]
    hub.fail("commit", HANG, times=5)
    done = shiftbench(env, *publish)
    assert (done.returncode, done.stderr) == (
        1,
        f"Error: publishing {REPO}@v1.0.0 failed at the commit (ReadTimeout: timed out); no "
        "tag was made: run the same command again to complete the release\n",
    )
    assert tags(hub) == {}
    done = shiftbench(env, *publish)
    assert done.returncode == 0, done.stderr
    assert set(tags(hub)) == {"v1.0.0"}


def test_verify_finds_a_changed_file(stsb_copy, hub, tmp_path):
    env = hub_env(hub, tmp_path)
    assert (
        shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0").returncode == 0
    )
    commit = hub.repos[REPO].commits[tags(hub)["v1.0.0"]]
    commit.files["original/test.parquet"] += b"\0"
    done = shiftbench(env, "verify", f"{REPO}@v1.0.0")
    assert done.returncode == 1
    assert "  original/test.parquet: content differs from the manifest's sha256" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {REPO}@v1.0.0 does not match its manifest (1 problem)"
    )
    # evaluate refuses to score a version that does not match its manifest
    out = tmp_path / "results"
    done = shiftbench(env, "evaluate", f"{REPO}@v1.0.0", "-m", ENCODER, "-o", out)
    assert done.returncode == 2
    assert done.stderr == (
        f"Error: {REPO}@v1.0.0 does not match its manifest: "
        "original/test.parquet: content differs from the manifest's sha256\n"
    )
    assert not out.exists()


def test_mteb_evaluates_a_published_config(stsb_copy, hub, invoke, tmp_path):
    """The card's own mteb snippet, run against the local Hub, equals shiftbench's score."""
    env = hub_env(hub, tmp_path)
    assert (
        shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0").returncode == 0
    )
    card = hub.repos[REPO].commits[tags(hub)["v1.0.0"]].files["README.md"].decode()
    start = card.index("```python\nimport mteb")
    snippet = card[start + len("```python\n") : card.index("```", start + 10)]
    # The encoder comes from its PyPI package here, not from the Hub.
    snippet = "from shiftbench.core.models.encoders import Encoder\n" + snippet.replace(
        f'mteb.get_model("{ENCODER}")', f'Encoder("{ENCODER}").model'
    )
    snippet += "\nprint(results.task_results[0].scores['test'][0]['cosine_spearman'])\n"
    done = python(env, snippet)
    assert done.returncode == 0, done.stderr
    theirs = float(done.stdout.splitlines()[-1])

    out = tmp_path / "ours"
    assert invoke("evaluate", stsb_copy, "-m", ENCODER, "-o", out).exit_code == 0
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (ours,) = [r for r in doc["models"][0]["results"] if r["config"] == "paraphrase-s1"]
    assert ours["scores"]["cosine_spearman"] == pytest.approx(theirs, abs=1e-6)

    # The card's shiftbench recipe: download the version, evaluate the folder.
    start = card.index("```bash\nhf download")
    download = card[start + len("```bash\n") :].splitlines()[0]
    folder = tmp_path / download.split()[-1]
    hf = str(Path(sys.executable).parent / "hf")  # huggingface_hub's CLI, beside python
    done = subprocess.run(
        [hf, *download.split()[1:-1], str(folder)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out2 = tmp_path / "downloaded-results"
    assert invoke("evaluate", folder, "-m", ENCODER, "-o", out2).exit_code == 0
    again = json.loads((out2 / "results.json").read_text(encoding="utf-8"))["models"][0]["results"]
    assert [r["scores"] for r in again] == [r["scores"] for r in doc["models"][0]["results"]]

    # Or in one step: evaluate the published version by name.
    out3 = tmp_path / "by-name"
    done = shiftbench(env, "evaluate", f"{REPO}@v1.0.0", "-m", ENCODER, "-o", out3, "--no-plots")
    assert done.returncode == 0, done.stderr
    named = json.loads((out3 / "results.json").read_text(encoding="utf-8"))
    assert named["target"] == f"{REPO.split('/')[-1]}@v1.0.0"
    assert named["source"]["release"] == {
        "repo": REPO, "tag": "v1.0.0", "commit": tags(hub)["v1.0.0"]
    }  # fmt: skip
    by_name = named["models"][0]["results"]
    assert [r["scores"] for r in by_name] == [r["scores"] for r in doc["models"][0]["results"]]


def test_probe_scores_a_published_version_with_controls(
    stsb_copy, shared_data, hub, invoke, tmp_path
):
    """Controls travel with a release: the card names them, and `shiftbench probe
    ORG/NAME@vX.Y.Z` downloads the version and gives the figures of the local folder."""
    args = ["gen", "STSBenchmark", "--data-dir", shared_data / "STSBenchmark", "--limit", "20"]
    done = invoke(*args, "-q", "-t", "word-jumble-1,word-jumble-2", "-s", "1", "-o", stsb_copy)
    assert done.exit_code == 0, done.output
    env = hub_env(hub, tmp_path)
    done = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0")
    assert done.returncode == 0, done.stderr
    card = hub.repos[REPO].commits[tags(hub)["v1.0.0"]].files["README.md"].decode()
    assert "| `word-jumble-2-s1` | word-jumble-2 | control (meaning changed) |" in card

    local = tmp_path / "local"
    assert invoke("probe", stsb_copy, "-m", ENCODER, "-q", "--no-plots", "-o", local).exit_code == 0
    remote = tmp_path / "remote"
    done = shiftbench(env, "probe", f"{REPO}@v1.0.0", "-m", ENCODER, "-q", "--no-plots", "-o",
                      remote)  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = json.loads((local / "probes.json").read_text(encoding="utf-8"))
    second = json.loads((remote / "probes.json").read_text(encoding="utf-8"))
    assert second["targets"] == [f"{REPO.split('/')[-1]}@v1.0.0"]
    assert second["datasets"][0]["anchors"] == first["datasets"][0]["anchors"] > 0
    # the figures are keyed by each target's label; the label aside, they are the same
    local_label, remote_label = first["targets"][0], second["targets"][0]
    same = json.dumps(second["models"][0]["measures"]).replace(f'"{remote_label}"', '"X"')
    assert same == json.dumps(first["models"][0]["measures"]).replace(f'"{local_label}"', '"X"')


def test_card_of_a_run_over_two_subsets(scripted, invoke, shared_data, tmp_path):
    """Languages are those of the subsets the run used; every config of both subsets loads."""
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    run = tmp_path / "run"
    source = shared_data / "STSBenchmarkMultilingualSTS"
    args = ["--subset", "de", "--subset", "fr", "--limit", "5", "-t", "paraphrase", "-s", "1"]
    result = invoke(
        "gen", "STSBenchmarkMultilingualSTS", "--data-dir", source, *args, "-b", "scripted",
        "-q", "-o", run,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert invoke("card", run, "--repo", REPO, "--version", "1.0.0").exit_code == 0
    data = DatasetCard.load(run / "README.md", repo_type="dataset").data.to_dict()
    assert data["language"] == ["de", "fr"]
    assert data["multilinguality"] == "multilingual"
    names = [c["config_name"] for c in data["configs"]]
    assert names == ["original.de", "paraphrase-s1.de", "original.fr", "paraphrase-s1.fr"]
    for name in names:
        assert load_dataset(str(run), name, split="test").num_rows == 5
    text = (run / "README.md").read_text(encoding="utf-8")
    assert "import mteb" not in text  # one mteb task per subset is beyond a snippet


def test_run_publishes_each_source_of_a_spec(scripted, invoke, shared_data, hub, tmp_path):
    """`shiftbench run` with a release: one repository per source, tagged, loadable at the
    version, with the spec in the repository and its card; a re-run publishes nothing."""
    from support.run import stsb_spec

    spec = stsb_spec(
        tmp_path, shared_data, "release:\n  repo: shiftbench-test/run\n  version: 1.0.0\n"
    )
    assert invoke("run", spec, "-q", "--until", "card").exit_code == 0
    env = {**hub_env(hub, tmp_path), "PYTHONPATH": str(Path(__file__).parent)}
    # the spec names the tests' scripted generator, registered here as the fixture does
    code = (
        "import sys; from shiftbench.llm.backends import BACKENDS; "
        "BACKENDS['scripted'] = 'support.scripted_backend:ScriptedBackend'; "
        "from shiftbench.cli import main; sys.argv[0] = 'shiftbench'; main()"
    )
    for attempt in (1, 2):
        done = subprocess.run(
            [sys.executable, "-c", code, "run", str(spec), "-q"],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        state = "running" if attempt == 1 else "finished earlier, skipped"
        assert f"[publish] STSBenchmark: {state}" in done.stdout
        assert f"[publish] sample: {state}" in done.stdout
        assert "[card] sample: finished earlier, skipped" in done.stdout
        published = "published shiftbench-test/run-sample@v1.0.0 (commit "
        assert (published in done.stdout) == (attempt == 1)
    spec_bytes = spec.read_bytes()
    for folder in ("STSBenchmark", "sample"):
        repo = f"shiftbench-test/run-{folder}"
        files = hub.repos[repo].commits[hub.repos[repo].tags["v1.0.0"]].files
        assert files["shiftbench-spec.yaml"] == spec_bytes
        assert hashlib.sha256(spec_bytes).hexdigest() in files["README.md"].decode()
        run = tmp_path / "out" / folder / "run"
        local = read_rows(run / "paraphrase-s1" / "test.jsonl")
        loaded = python(
            env,
            f"""
            import json
            from datasets import load_dataset
            ds = load_dataset({repo!r}, "paraphrase-s1", revision="v1.0.0", split="test")
            print(json.dumps(ds.to_list()))
            """,
        )
        assert loaded.returncode == 0, loaded.stderr
        assert json.loads(loaded.stdout.splitlines()[-1]) == local


def test_card_counts_identical_back_translations_as_kept_and_scored(status_run, invoke):
    result = invoke("card", status_run)
    assert result.exit_code == 0, result.output
    text = (status_run / "README.md").read_text(encoding="utf-8")
    assert (
        "| `backtranslation-s1337` | backtranslation | Lexical/Stylistic | 1337 | - | 42 test | "
        "identical 2, ok 39, truncated 1 |"
    ) in text
    assert (
        "A back-translation identical to its input is a result, not a failure: "
        "back-translation is the near-identity baseline of the HTEB protocol, so these rows "
        "are kept with the status `identical` and scored like `ok` rows (2 of 42 "
        "back-translated rows here)."
    ) in " ".join(text.split())


def croissant_records(folder: Path, record_set: str) -> list[dict]:
    """The rows mlcroissant reads for one record set of a downloaded release."""
    import mlcroissant as mlc

    dataset = mlc.Dataset(jsonld=folder / "croissant.json")
    prefix = f"{record_set}/"
    return [
        {
            k.removeprefix(prefix): v.decode("utf-8") if isinstance(v, bytes) else v
            for k, v in record.items()
        }
        for record in dataset.records(record_set)
    ]


def download(env: dict[str, str], version: str, where: Path) -> Path:
    done = python(
        env,
        f"""
        from huggingface_hub import snapshot_download
        print(snapshot_download({REPO!r}, repo_type="dataset", revision={version!r},
                                local_dir={str(where)!r}))
        """,
    )
    assert done.returncode == 0, done.stderr
    return where


def test_parquet_release_is_typed_described_and_scored(stsb_copy, invoke, hub, tmp_path):
    """A release's configs are Parquet, `original` loads by default, croissant.json reads
    back with mlcroissant row for row, and --results puts evaluate's figures into the
    card's model-index and eval_results/ exactly."""
    import yaml
    from huggingface_hub import DatasetCard, parse_eval_result_entries
    from huggingface_hub.repocard_data import model_index_to_eval_results

    env = hub_env(hub, tmp_path)
    scores = tmp_path / "scores"
    assert invoke("evaluate", stsb_copy, "-m", ENCODER, "-o", scores, "--no-plots").exit_code == 0
    done = shiftbench(
        env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0", "--results", scores,
        "--rai", "dataLimitations=Only 20 rows per config.", "--date-published", "2026-11-25",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    files = hub.repos[REPO].commits[tags(hub)["v1.0.0"]].files
    configs = json.loads((stsb_copy / "shiftbench.json").read_text(encoding="utf-8"))["configs"]
    assert {f"{c}/test.parquet" for c in configs} <= set(files)
    assert not {f"{c}/test.jsonl" for c in configs} & set(files)

    # load_dataset without a config name gives the source rows; features are typed
    done = python(
        env,
        f"""
        import json
        from datasets import load_dataset
        ds = load_dataset({REPO!r}, revision="v1.0.0", split="test")
        print(json.dumps([ds.to_list(), {{k: str(v) for k, v in ds.features.items()}}]))
        """,
    )
    assert done.returncode == 0, done.stderr
    rows, features = json.loads(done.stdout.splitlines()[-1])
    assert rows == read_rows(stsb_copy / "original" / "test.jsonl")
    assert features["score"] == "Value('float64')" and features["row_id"] == "Value('int64')"

    # croissant.json: mlcroissant validates it and reads every row of every config
    local = download(env, "v1.0.0", tmp_path / "release")
    doc = json.loads((local / "croissant.json").read_text(encoding="utf-8"))
    for name in configs:
        assert croissant_records(local, f"{name}/test") == read_rows(
            stsb_copy / name / "test.jsonl"
        ), name
    assert doc["version"] == "1.0.0" and doc["datePublished"] == "2026-11-25"
    assert doc["url"] == f"https://huggingface.co/datasets/{REPO}"
    assert doc["rai:dataLimitations"][-1] == "Only 20 rows per config."
    assert doc["rai:dataLimitations"][0].startswith("The variants are written by a language")
    model = configs["paraphrase-s1"]["model"]["id"]
    assert doc["rai:machineAnnotationTools"] == [f"{model} (rewriting)"]
    report = json.loads((stsb_copy / "validation.json").read_text(encoding="utf-8"))
    rows_checked = sum(s["rows"] for s in report["configs"].values())
    failed = sum(s["failed_rows"] for s in report["configs"].values())
    assert doc["rai:dataAnnotationProtocol"][0].startswith(
        f"shiftbench validate checked {len(report['configs'])} configs ({rows_checked} rows)"
    )
    assert f"; {failed} rows failed at least one check." in doc["rai:dataAnnotationProtocol"][0]
    sha = {f["path"]: f["sha256"] for f in json.loads(files["shiftbench-release.json"])["files"]}
    assert {d["@id"]: d["sha256"] for d in doc["distribution"]} == {
        f"{c}/test.parquet": sha[f"{c}/test.parquet"] for c in configs
    }

    # evaluate's figures, exactly, in the card's model-index and in eval_results/
    ours = json.loads((scores / "results.json").read_text(encoding="utf-8"))["models"][0]
    expected = {r["config"]: r["main_score"] for r in ours["results"]}
    card = DatasetCard(files["README.md"].decode("utf-8"))
    (entry,) = card.data["model-index"]
    name, results = model_index_to_eval_results([entry])
    assert name == ENCODER
    assert {r.dataset_config: r.metric_value for r in results} == expected
    assert {
        (r.dataset_type, r.dataset_split, r.dataset_revision, r.metric_type) for r in results
    } == {(REPO, "test", "v1.0.0", "cosine_spearman")}
    entries = parse_eval_result_entries(
        yaml.safe_load(files["eval_results/sentence-transformers__all-MiniLM-L6-v2.yaml"])
    )
    assert {e.task_id: e.value for e in entries} == {k: round(v, 6) for k, v in expected.items()}
    assert {(e.dataset_id, e.dataset_revision) for e in entries} == {(REPO, "v1.0.0")}
    table = files["README.md"].decode("utf-8").split("## Results")[1]
    paraphrase = next(r for r in ours["results"] if r["config"] == "paraphrase-s1")
    # 20 rows: a thin interval, marked as evaluate's tables mark it, with their note
    assert paraphrase["rows"] == 20
    places = width_places(paraphrase["ci95"], 4)  # the interval's width to two digits
    assert (
        f"| `paraphrase-s1` | {paraphrase['main_score']:.4f} ({paraphrase['delta']:+.{places}f}*) |"
        in table
    )
    assert f"\n\n{THIN_NOTE}\n" in table


def test_a_json_lines_release_stays_json_lines(stsb_copy, invoke, hub, tmp_path):
    """--format jsonl publishes the files as gen wrote them; such a version verifies,
    evaluates, and publishing it again (now Parquet by default) changes nothing."""
    env = hub_env(hub, tmp_path)
    done = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0",
                      "--format", "jsonl")  # fmt: skip
    assert done.returncode == 0, done.stderr
    files = hub.repos[REPO].commits[tags(hub)["v1.0.0"]].files
    assert files["original/test.jsonl"] == (stsb_copy / "original" / "test.jsonl").read_bytes()
    assert "croissant.json" not in files and not any(p.endswith(".parquet") for p in files)
    commits = len(hub.repos[REPO].commits)
    again = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.0.0")
    assert again.returncode == 0, again.stderr
    assert f"{REPO}@v1.0.0 is already published with this content; nothing to do." in again.stdout
    assert len(hub.repos[REPO].commits) == commits
    assert load_rows(env, "paraphrase-s1", "v1.0.0") == read_rows(
        stsb_copy / "paraphrase-s1" / "test.jsonl"
    )
    done = shiftbench(env, "verify", f"{REPO}@v1.0.0")
    assert done.returncode == 0, done.stderr
    # the next version is Parquet; both evaluate to the same figures
    done = shiftbench(env, "publish", stsb_copy, "--repo", REPO, "--version", "1.1.0")
    assert done.returncode == 0, done.stderr
    figures = []
    for version in ("v1.0.0", "v1.1.0"):
        out = tmp_path / version
        done = shiftbench(env, "evaluate", f"{REPO}@{version}", "-m", ENCODER, "-o", out,
                          "--no-plots")  # fmt: skip
        assert done.returncode == 0, done.stderr
        doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
        figures.append([(r["config"], r["scores"]) for r in doc["models"][0]["results"]])
    assert figures[0] == figures[1] and len(figures[0]) == 4


def test_bad_release_metadata_is_one_line_and_writes_nothing(stsb_copy, hub, tmp_path):
    env = hub_env(hub, tmp_path)
    card = (stsb_copy / "README.md").read_bytes()
    results = tmp_path / "results"
    results.mkdir()
    meta = json.loads((stsb_copy / "shiftbench.json").read_text(encoding="utf-8"))
    local_model = {"id": str(tmp_path), "revision": "sha256:0"}
    record = {"config": "original", "kind": "original", "subset": "default", "split": "test",
              "rows": 10, "main_score": 0.5, "delta": None}  # fmt: skip
    (results / "results.json").write_text(json.dumps({
        "target": "results", "source": meta["source"], "main_score": "cosine_spearman",
        "task_type": "STS",
        "models": [{"model": local_model, "results": [record]}],
    }), encoding="utf-8")  # fmt: skip
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.json").write_text(
        json.dumps(
            {
                "target": "other",
                "source": {"name": "STS22", "revision": "abc"},
                "task_type": "STS",
                "main_score": "cosine_spearman",
                "models": [],
            }
        ),
        encoding="utf-8",
    )
    publish = ["publish", stsb_copy, "--repo", REPO, "--version", "1.0.0"]
    cases = [
        ([*publish, "--rai", "nope=x"], "Error: --rai: unknown Croissant RAI field 'nope'; "
         "known: " + ", ".join(RAI_FIELDS)),
        ([*publish, "--rai", "dataBiases"], "Error: --rai takes FIELD=TEXT, got 'dataBiases'"),
        ([*publish, "--format", "jsonl", "--rai", "dataBiases=x"],
         "Error: --rai and --date-published describe croissant.json, which only a Parquet "
         "release has"),
        ([*publish, "--results", tmp_path / "nowhere"],
         f"Error: --results {tmp_path / 'nowhere'}: no results.json there"),
        ([*publish, "--results", other],
         f"Error: --results {other}: these are results on STS22 at revision abc, the run is "
         "STSBenchmark at revision b0fddb56ed78048fa8b90373c8a3cfc37b684831"),
        ([*publish, "--results", results],
         f"Error: --results {results}: its model was loaded from a local path; name it as it "
         "is known on the Hub: --results ORG/MODEL=DIR"),
        (["card", stsb_copy, "--format", "parquet"],
         "Error: a parquet card names data files the run folder does not hold; write it "
         "elsewhere with --output (publish converts the files)"),
    ]  # fmt: skip
    for args, message in cases:
        done = shiftbench(env, *args)
        assert (done.returncode, done.stderr.strip()) == (2, message), args
    # mlcroissant refuses a date that is not ISO 8601: one line, nothing sent
    done = shiftbench(env, *publish, "--date-published", "yesterday")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("Error: the Croissant metadata does not validate: ")
    assert "ISO 8601" in done.stderr and "Got yesterday" in done.stderr
    assert hub.writes() == [] and REPO not in hub.repos
    assert (stsb_copy / "README.md").read_bytes() == card
    # a named local model is fine: the card names it, never its path
    preview = tmp_path / "card.md"
    done = shiftbench(env, "card", stsb_copy, "--results", f"org/mini={results}", "-o", preview,
                      "--format", "parquet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = preview.read_text(encoding="utf-8")
    assert "- name: org/mini" in text and str(tmp_path) not in text
    assert "path: original/test.parquet" in text and "## Croissant metadata" in text


def test_a_wrong_token_or_a_null_text_is_refused_and_nothing_is_published(stsb_copy, hub, tmp_path):
    """A token the Hub refuses: one line that says so (not "run it again"), exit 2, the
    token never printed, nothing published. A run whose rows evaluate would refuse (a null
    text) is refused before the Hub is asked, so no release freezes it."""
    publish = ["publish", stsb_copy, "--repo", REPO, "--version", "1.0.0"]
    wrong = "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0007"
    done = shiftbench(hub_env(hub, tmp_path, token=wrong), *publish)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: the Hub refused the token at "), last
    assert last.endswith(f"set HF_TOKEN (or 'hf auth login') to a token that may write to {REPO}")
    assert wrong not in done.stdout + done.stderr
    assert tags(hub) == {}

    data = stsb_copy / "paraphrase-s1" / "test.jsonl"
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    rows[3]["sentence2"] = None
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = shiftbench(hub_env(hub, tmp_path), *publish)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {data}:4: field sentence2 must be a string, not null"
    )
    assert tags(hub) == {} and REPO not in hub.repos
