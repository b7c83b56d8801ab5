"""A local server that speaks Ollama's REST API, for driving the real `ollama` client.

Endpoints and shapes follow Ollama's API: GET /api/version and /api/tags; POST /api/show
(404 with {"error": ...} for an unknown model); POST /api/chat, streamed as NDJSON chunks
by default and as one JSON object with "stream": false, the last object carrying done,
done_reason ("stop" or "length"), prompt_eval_count and eval_count. Tokens are words here.

The model answers "ECHO <last paragraph of the prompt>" (or the reply `replies` scripts for
that paragraph), cut at num_predict words. A prompt
longer than num_ctx words is truncated to its last num_ctx words, as Ollama does, and
prompt_eval_count says so. `faults` is consumed one per chat request: "500", "reset",
"malformed", "hang" (answer nothing until the server stops). A model with the "thinking"
capability leaks a <think> block unless asked not to think, as some models do anyway.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from support.http_stub import Handler, StubServer

DIGEST = "sha256:" + "ab" * 32


class OllamaStub(StubServer):
    def __init__(self, models: dict[str, list[str]] | None = None) -> None:
        self.models = models or {"stub:latest": ["completion"]}
        self.faults: list[str] = []
        self.chats: list[dict[str, Any]] = []
        self.replies: dict[str, str] = {}  # last paragraph of a prompt -> its reply
        # first-token log-probabilities served when a chat asks for logprobs
        self.top_logprobs: dict[str, float] = {"Yes": -0.2, "No": -1.8, " yes": -3.1, "Maybe": -4}
        self.lock = threading.Lock()
        stub = self

        class Ollama(Handler):
            protocol_version = "HTTP/1.1"

            def _json(self, status: int, payload: Any) -> None:
                self.reply(status, payload, "application/json; charset=utf-8")

            def _model(self, name: str) -> str | None:
                full = name if ":" in name else f"{name}:latest"
                return full if full in stub.models else None

            def do_GET(self) -> None:
                if self.path == "/api/version":
                    self._json(200, {"version": "0.12.6"})
                elif self.path == "/api/tags":
                    self._json(
                        200,
                        {
                            "models": [
                                {
                                    "name": m,
                                    "model": m,
                                    "modified_at": "2026-11-01T10:00:00Z",
                                    "size": 101000000,
                                    "digest": DIGEST,
                                    "details": {
                                        "parent_model": "",
                                        "format": "gguf",
                                        "family": "llama",
                                        "families": ["llama"],
                                        "parameter_size": "135M",
                                        "quantization_level": "Q4_1",
                                    },
                                }
                                for m in stub.models
                            ]
                        },
                    )
                else:
                    self._json(404, {"error": "404 page not found"})

            def do_POST(self) -> None:
                body = json.loads(self.body_bytes() or b"{}")
                if self.path == "/api/show":
                    model = self._model(body.get("model", ""))
                    if model is None:
                        self._json(404, {"error": f"model '{body.get('model')}' not found"})
                    else:
                        self._json(
                            200,
                            {
                                "modelfile": f"FROM {model}",
                                "parameters": 'stop "<|im_end|>"',
                                "template": "{{ .Prompt }}",
                                "details": {"format": "gguf"},
                                "model_info": {"general.architecture": "llama"},
                                "capabilities": stub.models[model],
                                "modified_at": "2026-11-01T10:00:00Z",
                            },
                        )
                elif self.path == "/api/chat":
                    self._chat(body)
                else:
                    self._json(404, {"error": "404 page not found"})

            def _chat(self, body: dict[str, Any]) -> None:
                with stub.lock:
                    stub.chats.append(body)
                    fault = stub.faults.pop(0) if stub.faults else None
                if fault == "reset":
                    self.close_connection = True
                    self.connection.close()
                    return
                if fault == "hang":
                    self.hold()
                    return
                if fault == "500":
                    self._json(500, {"error": "llama runner process has terminated"})
                    return
                model = self._model(body.get("model", ""))
                if model is None:
                    self._json(
                        404,
                        {"error": f'model "{body.get("model")}" not found, try pulling it first'},
                    )
                    return
                thinking = "thinking" in stub.models[model]
                if body.get("think") and not thinking:
                    self._json(400, {"error": f'"{model}" does not support thinking'})
                    return
                if fault == "malformed":
                    self._json(200, {"model": model, "message": "not an object", "done": True})
                    return
                options = body.get("options") or {}
                num_ctx = options.get("num_ctx", 2048)
                words = body["messages"][-1]["content"].split()
                if len(words) > num_ctx:
                    words = words[-num_ctx:]
                prompt = " ".join(words)
                asked = body["messages"][-1]["content"].rsplit("\n\n", 1)[-1]
                answer = stub.replies.get(asked.strip(), "ECHO " + asked).split()
                if thinking and body.get("think") is not False:
                    answer = ["<think>", "let", "me", "think", "</think>", *answer]
                limit = options.get("num_predict", -1)
                reason = "stop"
                if 0 <= limit < len(answer):
                    answer, reason = answer[:limit], "length"
                final = {
                    "model": model,
                    "created_at": "2026-11-22T00:00:00Z",
                    "done": True,
                    "done_reason": reason,
                    "total_duration": 1000,
                    "load_duration": 10,
                    "prompt_eval_count": len(prompt.split()),
                    "prompt_eval_duration": 100,
                    "eval_count": len(answer),
                    "eval_duration": 500,
                }
                if body.get("logprobs"):
                    # Ollama (0.12.11+) lists, per generated token, its log-probability
                    # and the `top_logprobs` most likely alternatives.
                    ranked = sorted(stub.top_logprobs.items(), key=lambda kv: -kv[1])
                    shown = ranked[: int(body.get("top_logprobs") or 0)]
                    first, value = ranked[0]
                    answer = [first][: max(limit, 1) if limit >= 0 else 1]
                    final["eval_count"] = len(answer)
                    final["logprobs"] = [
                        {
                            "token": first,
                            "logprob": value,
                            "bytes": list(first.encode()),
                            "top_logprobs": [
                                {"token": t, "logprob": v, "bytes": list(t.encode())}
                                for t, v in shown
                            ],
                        }
                    ]
                text = " ".join(answer)
                if body.get("stream", True) is False:
                    final["message"] = {"role": "assistant", "content": text}
                    self._json(200, final)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                pieces = [w + " " for w in answer[:-1]] + answer[-1:]
                chunks = [
                    {
                        "model": model,
                        "created_at": "2026-11-22T00:00:00Z",
                        "message": {"role": "assistant", "content": p},
                        "done": False,
                    }
                    for p in pieces
                ]
                final["message"] = {"role": "assistant", "content": ""}
                for chunk in [*chunks, final]:
                    line = json.dumps(chunk).encode() + b"\n"
                    self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")

        super().__init__(Ollama)
