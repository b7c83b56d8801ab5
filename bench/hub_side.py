"""The bare side of bench_publish.py: a release made by hand with huggingface_hub.

What a user of huggingface_hub does to put a folder on the Hub as a tagged version, and
nothing else: create the dataset repository, upload the folder in one commit, and tag
that commit. No checks, no conversion, no card: the folder is uploaded as it is. The Hub
and the token come from HF_ENDPOINT and HF_TOKEN, as for `shiftbench publish`.

    python bench/hub_side.py FOLDER ORG/NAME vX.Y.Z

Prints the commit the tag names.
"""

from __future__ import annotations

import sys


def main() -> None:
    folder, repo, tag = sys.argv[1:4]
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(repo, repo_type="dataset")
    info = api.upload_folder(repo_id=repo, folder_path=folder, repo_type="dataset")
    api.create_tag(repo, tag=tag, revision=info.oid, repo_type="dataset")
    print(info.oid)


if __name__ == "__main__":
    main()
