"""The part of an Argilla server that the `argilla` SDK needs before it will parse files.

Argilla's SDK (2.x) asks its server who the user is (GET /api/v1/me) whenever a client is
made, and its settings objects resolve the default workspace (GET /api/v1/me/workspaces);
none of its loaders works without a server. Those two answers follow Argilla's API
(UserModel, a page of WorkspaceModel); every other path is a 404, so a test that needed
more of a server would fail loudly rather than pass against a guess.
"""

from __future__ import annotations

from support.http_stub import Handler, StubServer

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


class ArgillaStub(StubServer):
    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.requests: list[str] = []
        stub = self

        class Argilla(Handler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                stub.requests.append(f"GET {self.path}")
                if self.headers.get("X-Argilla-Api-Key") != stub.api_key:
                    self.reply(401, {"detail": "Could not validate credentials"})
                elif self.path == "/api/v1/me":
                    self.reply(200, USER)
                elif self.path == "/api/v1/me/workspaces":
                    self.reply(200, {"items": [WORKSPACE]})
                else:
                    self.reply(404, {"detail": "Not Found"})

            def do_POST(self) -> None:
                stub.requests.append(f"POST {self.path}")
                self.reply(404, {"detail": "Not Found"})

        super().__init__(Argilla)
