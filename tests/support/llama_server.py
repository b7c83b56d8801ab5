"""llama-cpp-python's OpenAI-compatible server, started on a free 127.0.0.1 port."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import httpx

from support.waiting import wait_for


def llama_threads() -> int:
    """llama.cpp's threads for a test: the compute threads conftest gives each pytest-xdist
    worker (OMP_NUM_THREADS), else every core. llama.cpp's threads spin while they wait, so
    more of them than the worker's share slows both workers down severalfold."""
    return int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1)


@contextlib.contextmanager
def llama_cpp_server(model: str, alias: str, *options: str) -> Iterator[str]:
    """Serve the GGUF file `model` as `alias` (with more server `options`); yields the
    base URL (…/v1) once /v1/models answers, and stops the server afterwards. It computes
    with `llama_threads()` threads, for single texts and batches alike."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", model, "--model_alias", alias,
         "--host", "127.0.0.1", "--port", str(port),
         "--n_threads", str(llama_threads()), "--n_threads_batch", str(llama_threads()),
         *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"

    def serving() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the llama.cpp server exited ({process.returncode})")
        try:
            return httpx.get(f"{url}/models", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_for(serving, 120, "the llama.cpp server to serve /v1/models")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
