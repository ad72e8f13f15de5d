"""A fake OpenAI-compatible endpoint: real HTTP on 127.0.0.1, real JSON.

`/v1/embeddings` answers a deterministic bag-of-words embedding (each word
hashed to a dimension), so texts that share words are similar and the same
text always gets the same vector. `/v1/chat/completions` answers from a queue
of scripted replies (`chat_replies`), else a default: `{"facts": []}` for
fact extraction, a one-line summary otherwise. `fail_with` makes every call
answer that HTTP status. Every request body is kept in `requests`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSION = 64
_WORD = re.compile(r"\w+")


def fake_embedding(text: str, dimension: int = DIMENSION) -> list[float]:
    vector = [0.0] * dimension
    for word in _WORD.findall(text.casefold()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "little") % dimension] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


@dataclass
class FakeOpenAI:
    dimension: int = DIMENSION
    chat_replies: deque[str] = field(default_factory=deque)
    fail_with: int = 0
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append((self.path, body))
                status, reply = fake.answer(self.path, body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if self.fail_with:
            return self.fail_with, {"error": {"message": "scripted failure"}}
        if path.endswith("/embeddings"):
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": fake_embedding(t, self.dimension)}
                for i, t in enumerate(inputs)
            ]
            return 200, {"object": "list", "data": data, "model": body.get("model", "")}
        if path.endswith("/chat/completions"):
            return 200, {
                "choices": [{"message": {"role": "assistant", "content": self._chat(body)}}]
            }
        return 404, {"error": {"message": f"no route {path}"}}

    def _chat(self, body: dict[str, Any]) -> str:
        if self.chat_replies:
            return self.chat_replies.popleft()
        system = body["messages"][0]["content"]
        if "knowledge triples" in system:
            return json.dumps({"facts": []})
        last = body["messages"][-1]["content"]
        return "Model summary: " + " ".join(last.split()[:8])

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]
