"""A local OpenAI-compatible chat server for tests, with faults injected on demand.

It answers GET /v1/models and POST /v1/chat/completions as the OpenAI API does (the same
JSON shapes and status codes), replying "ECHO <last paragraph of the prompt>" (or the reply
`replies` scripts for that paragraph), cut at `max_tokens` words with finish_reason
"length" as a server cuts at its token budget, and records every request. `faults` is a
list consumed one per completion request: "500", "429", "reset" (close the connection
without answering), "malformed" (a 200 with a broken body).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OpenAIStub:
    def __init__(self, models: tuple[str, ...] = ("stub-model",)) -> None:
        self.models = models
        self.faults: list[str] = []
        self.delay = 0.0  # seconds each completion takes
        self.requests: list[dict[str, Any]] = []
        self.replies: dict[str, str] = {}  # last paragraph of a prompt -> its reply
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any) -> None:
                body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self._write(status, body)
                except (BrokenPipeError, ConnectionResetError):
                    # the client gave up waiting (its timeout): nobody is left to answer
                    self.close_connection = True

            def _write(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path == "/v1/models":
                    data = [{"id": m, "object": "model", "owned_by": "stub"} for m in stub.models]
                    self._send(200, {"object": "list", "data": data})
                else:
                    self._send(404, {"error": {"message": "not found", "type": "invalid_request"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                with stub.lock:
                    stub.requests.append(body)
                    stub.headers.append(dict(self.headers))
                    fault = stub.faults.pop(0) if stub.faults else None
                if stub.delay:
                    time.sleep(stub.delay)
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                elif fault == "reset":
                    self.close_connection = True
                    self.connection.close()
                elif fault in ("500", "429"):
                    self._send(int(fault), {"error": {"message": f"injected {fault}"}})
                elif fault == "malformed":
                    self._send(200, b'{"choices": [')
                elif body.get("model") not in stub.models:
                    self._send(404, {"error": {"message": f"model {body.get('model')} not found"}})
                else:
                    prompt = body["messages"][-1]["content"]
                    asked = prompt.rsplit("\n\n", 1)[-1]
                    words = stub.replies.get(asked.strip(), "ECHO " + asked).split(" ")
                    limit = body.get("max_tokens")
                    reason = "stop"
                    if limit is not None and len(words) > limit:
                        words, reason = words[:limit], "length"
                    text = " ".join(words)
                    self._send(
                        200,
                        {
                            "id": "chatcmpl-stub",
                            "object": "chat.completion",
                            "model": body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": reason,
                                    "message": {"role": "assistant", "content": text},
                                }
                            ],
                            "usage": {
                                "prompt_tokens": len(prompt.split()),
                                "completion_tokens": len(text.split()),
                                "total_tokens": len(prompt.split()) + len(text.split()),
                            },
                        },
                    )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> OpenAIStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
