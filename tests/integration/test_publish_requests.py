"""publish's round trips to the Hub: each one costs a user a network latency.

The Hub is tests/support/hub_server.py on 127.0.0.1, reached through HF_ENDPOINT by a
shiftbench subprocess, as a user's shell would.
"""

from __future__ import annotations

import os
import subprocess
import sys

from support.cards import REPO
from support.hub_server import LocalHub

TOKEN = "hf_shiftbenchFAKEtokenNeverToBeShown0042"


def test_a_new_release_takes_six_requests_whatever_its_number_of_files(stsb_copy, tmp_path):
    """The refs read (the repository is not there yet), its creation, one pre-upload for
    all the files of a small release, the card's check, the commit and the tag: one more
    than huggingface_hub's own create_repo, upload_folder and create_tag, however many
    configs the run has."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    with LocalHub(TOKEN) as hub:
        env.update(HF_ENDPOINT=hub.url, HF_TOKEN=TOKEN, HF_HOME=str(tmp_path / "hf-home"),
                   HF_HUB_DISABLE_TELEMETRY="1")  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "shiftbench", "publish", str(stsb_copy), "--repo", REPO,
             "--version", "1.0.0", "-q"],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert (done.returncode, done.stderr, done.stdout) == (0, "", "")
        commit = hub.repos[REPO].resolve("v1.0.0")
        assert len(commit.files) > 5  # .gitattributes, the card, the manifest and the configs
        assert [(method, path) for method, path, _ in hub.requests] == [
            ("GET", f"/api/datasets/{REPO}/refs"),
            ("POST", "/api/repos/create"),
            ("POST", f"/api/datasets/{REPO}/preupload/main"),
            ("POST", "/api/validate-yaml"),  # huggingface_hub's check of the card
            ("POST", f"/api/datasets/{REPO}/commit/main"),
            ("POST", f"/api/datasets/{REPO}/tag/{commit.oid}"),
        ]
