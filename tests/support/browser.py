"""Headless Chromium through chromedriver, for the tests of the HTML pages."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from support.waiting import wait_for

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")


def start_chromedriver(log: Path) -> tuple[subprocess.Popen, int]:
    """chromedriver on a free 127.0.0.1 port, waited for up to a minute; its log goes to
    `log`, and into the failure message if it never listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [DRIVER, f"--port={port}", "--allowed-ips=127.0.0.1", f"--log-path={log}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"chromedriver exited ({process.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    try:
        wait_for(listening, 60, f"chromedriver to listen on 127.0.0.1:{port}")
    except AssertionError as exc:
        process.kill()
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
        pytest.fail(f"{exc}: {tail}")
    return process, port
