"""A local OpenAI-compatible chat server for tests, with faults injected on demand.

It answers GET /v1/models and POST /v1/chat/completions as the OpenAI API does (the same
JSON shapes and status codes), replying "ECHO <last paragraph of the prompt>" (or the reply
`replies` scripts for that paragraph), cut at `max_tokens` words with finish_reason
"length" as a server cuts at its token budget, and records every request. `faults` is a
list consumed one per completion request: "500", "429", "reset" (close the connection
without answering), "malformed" (a 200 with a broken body), "hang" (take the request and
answer nothing until the server stops).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from support.http_stub import Handler, StubServer


class OpenAIStub(StubServer):
    def __init__(self, models: tuple[str, ...] = ("stub-model",)) -> None:
        self.models = models
        self.faults: list[str] = []
        self.delay = 0.0  # seconds each completion takes
        self.requests: list[dict[str, Any]] = []
        self.replies: dict[str, str] = {}  # last paragraph of a prompt -> its reply
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        stub = self

        class OpenAI(Handler):
            def do_GET(self) -> None:
                if self.path == "/v1/models":
                    data = [{"id": m, "object": "model", "owned_by": "stub"} for m in stub.models]
                    self.reply(200, {"object": "list", "data": data})
                else:
                    self.reply(404, {"error": {"message": "not found", "type": "invalid_request"}})

            def do_POST(self) -> None:
                body = json.loads(self.body_bytes())
                with stub.lock:
                    stub.requests.append(body)
                    stub.headers.append(dict(self.headers))
                    fault = stub.faults.pop(0) if stub.faults else None
                if stub.delay:
                    time.sleep(stub.delay)
                if fault == "hang":
                    self.hold()
                elif self.path != "/v1/chat/completions":
                    self.reply(404, {"error": {"message": "not found"}})
                elif fault == "reset":
                    self.close_connection = True
                    self.connection.close()
                elif fault in ("500", "429"):
                    self.reply(int(fault), {"error": {"message": f"injected {fault}"}})
                elif fault == "malformed":
                    self.reply(200, b'{"choices": [')
                elif body.get("model") not in stub.models:
                    self.reply(404, {"error": {"message": f"model {body.get('model')} not found"}})
                else:
                    prompt = body["messages"][-1]["content"]
                    asked = prompt.rsplit("\n\n", 1)[-1]
                    words = stub.replies.get(asked.strip(), "ECHO " + asked).split(" ")
                    limit = body.get("max_tokens")
                    reason = "stop"
                    if limit is not None and len(words) > limit:
                        words, reason = words[:limit], "length"
                    text = " ".join(words)
                    self.reply(
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

        super().__init__(OpenAI, root="/v1")
