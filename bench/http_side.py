"""The bare side of bench_openai.py: POST the given chat-completion bodies, nothing else.

What a user without shiftbench would write: read the request bodies (a JSON list), send them
with httpx from `--concurrency` threads, and write the answers' texts (a JSON list, in the
bodies' order) to OUT/answers.json.

    python bench/http_side.py BODIES.json --base-url URL --concurrency 4 --out OUT
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bodies", type=Path)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    bodies = json.loads(args.bodies.read_text(encoding="utf-8"))
    with httpx.Client(base_url=args.base_url, timeout=600) as client:

        def send(body: dict[str, object]) -> str:
            response = client.post("/chat/completions", json=body)
            response.raise_for_status()
            return str(response.json()["choices"][0]["message"]["content"])

        with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
            answers = list(pool.map(send, bodies))
    (args.out / "answers.json").write_text(json.dumps(answers), encoding="utf-8")


if __name__ == "__main__":
    main()
