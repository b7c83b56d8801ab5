"""The one small HTTP-server base every local stand-in of the tests is built on.

`StubServer` serves a request-handler class on 127.0.0.1 (a free port) in a daemon thread,
as a context manager or with start()/stop(); `Handler` is the request handler they share:
silent, with a reply method for JSON or raw bytes and a reader for a request's body. The
stand-ins (the OpenAI-compatible server, Ollama, Argilla, the Hub, a study's web site)
differ only in the routes their handler answers. A handler can also `hold()` a request:
take it and answer nothing until the server stops, as a stuck server does.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class Handler(BaseHTTPRequestHandler):
    """A quiet request handler with the replies the stand-ins send."""

    def log_message(self, format: str, *args: Any) -> None:  # tests read requests, not logs
        pass

    def hold(self) -> None:
        """Answer nothing until the server stops (`StubServer.held` counts the requests
        held so far), then drop the connection."""
        stub = self.server.stub  # type: ignore[attr-defined]
        with stub.holding:
            stub.held += 1
        stub.released.wait()
        self.close_connection = True

    def body_bytes(self) -> bytes:
        """The request's body (empty without a Content-Length)."""
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def reply(
        self,
        status: int,
        payload: Any,
        content_type: str | None = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Send `payload` (bytes as they are, anything else as JSON) with its length (and
        `content_type`, unless None). A
        client that gave up waiting (its timeout) has closed the connection: nobody is left
        to answer, and the connection is dropped."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            self.send_response(status)
            if content_type is not None:
                self.send_header("Content-Type", content_type)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class StubServer:
    """`handler` served on 127.0.0.1 in a thread; `url` is its address plus `root`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], root: str = "") -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.stub = self  # type: ignore[attr-defined]
        self.root = root
        self.held = 0  # requests a handler holds unanswered (Handler.hold)
        self.holding = threading.Lock()
        self.released = threading.Event()  # set when the server stops: held requests end
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.root}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
