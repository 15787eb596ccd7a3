"""A local OpenAI-compatible chat-completions stub that streams SSE, for the tour and tests.

``POST /v1/chat/completions`` with ``stream: true`` answers as Server-Sent Events:
one ``chat.completion.chunk`` per word, a final chunk with ``usage``, then
``data: [DONE]``. The reply depends on the last user message:

* it contains ``slow``: 40 chunks, 0.25 s apart (time to press Stop);
* it contains ``fail``: HTTP 500 with an OpenAI-style error body;
* it contains ``markdown``: a reply with a heading, a list and a code block;
* otherwise ``Reply <n> to: <text>``, ``n`` counting the requests so far.

CORS headers are sent, so an extension page can call it without host permissions.
Every request is recorded in :attr:`StubProvider.requests` (headers and body).
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from typing import Any

MARKDOWN_REPLY = (
    "## Plan\n\nHere is **bold**, *italic* and `code`.\n\n- first item\n- second item\n\n"
    "```python\nprint('hello')\n```\n\nSee [the docs](https://example.com/docs)."
)


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return " ".join(
                    str(part.get("text", "")) for part in content if part.get("type") == "text"
                )
    return ""


class StubProvider:
    """The server; use as a context manager. ``base_url`` ends in ``/v1``."""

    def __init__(self, chunk_delay: float = 0.02) -> None:
        self.chunk_delay = chunk_delay
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def _cors(self) -> None:
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Headers", "authorization, content-type")
                self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")

            def do_OPTIONS(self) -> None:  # noqa: N802 - http.server naming
                self.send_response(204)
                self._cors()
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with stub.lock:
                    stub.requests.append({"headers": dict(self.headers), "body": body})
                    count = len(stub.requests)
                stub.respond(self, body, count)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> StubProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def respond(
        self, handler: http.server.BaseHTTPRequestHandler, body: dict[str, Any], n: int
    ) -> None:
        """Answer one chat-completions request."""
        text = _last_user_text(body)
        if "fail" in text:
            payload = json.dumps(
                {"error": {"message": "stub provider: simulated failure"}}
            ).encode()
            handler.send_response(500)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.send_header("Access-Control-Allow-Origin", "*")
            handler.end_headers()
            handler.wfile.write(payload)
            return
        delay = self.chunk_delay
        if "slow" in text:
            words = [f"word{i} " for i in range(40)]
            delay = 0.25
        elif "markdown" in text:
            words = [MARKDOWN_REPLY[i : i + 12] for i in range(0, len(MARKDOWN_REPLY), 12)]
        else:
            words = [w + " " for w in f"Reply {n} to: {text}".split(" ")]
            words[-1] = words[-1].rstrip()
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Access-Control-Allow-Origin", "*")
        handler.send_header("Connection", "close")
        handler.end_headers()
        model = str(body.get("model") or "stub-model")
        try:
            for word in words:
                chunk = {
                    "object": "chat.completion.chunk",
                    "model": model,
                    "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}],
                }
                handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                handler.wfile.flush()
                time.sleep(delay)
            final = {
                "object": "chat.completion.chunk",
                "model": model,
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": 10 + len(text.split()),
                    "completion_tokens": len(words),
                    "total_tokens": 10 + len(text.split()) + len(words),
                },
            }
            handler.wfile.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped the stream
        handler.close_connection = True
