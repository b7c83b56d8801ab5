"""The part of an Argilla server that the `argilla` SDK needs before it will parse files.

Argilla's SDK (2.x) asks its server who the user is (GET /api/v1/me) whenever a client is
made, and its settings objects resolve the default workspace (GET /api/v1/me/workspaces);
none of its loaders works without a server. Those two answers follow Argilla's API
(UserModel, a page of WorkspaceModel); every other path is a 404, so a test that needed
more of a server would fail loudly rather than pass against a guess.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STAMP = "2026-11-01T00:00:00"
USER = {
    "id": "5b0f3c2e-8d4a-4f1b-9c6e-2a7d1e0f4b3c",
    "username": "owner",
    "role": "owner",
    "first_name": "owner",
    "last_name": None,
    "inserted_at": STAMP,
    "updated_at": STAMP,
}
WORKSPACE = {
    "id": "9e4d2c1b-0a3f-4e5d-8c7b-6a5f4e3d2c1b",
    "name": "argilla",
    "inserted_at": STAMP,
    "updated_at": STAMP,
}


class ArgillaStub:
    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.requests: list[str] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, payload: Any) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                stub.requests.append(f"GET {self.path}")
                if self.headers.get("X-Argilla-Api-Key") != stub.api_key:
                    self._json(401, {"detail": "Could not validate credentials"})
                elif self.path == "/api/v1/me":
                    self._json(200, USER)
                elif self.path == "/api/v1/me/workspaces":
                    self._json(200, {"items": [WORKSPACE]})
                else:
                    self._json(404, {"detail": "Not Found"})

            def do_POST(self) -> None:
                stub.requests.append(f"POST {self.path}")
                self._json(404, {"detail": "Not Found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> ArgillaStub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
