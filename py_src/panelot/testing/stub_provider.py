"""A local OpenAI-compatible chat-completions stub that streams SSE, for the tour and tests.

``POST /v1/chat/completions`` with ``stream: true`` answers as Server-Sent Events:
one ``chat.completion.chunk`` per word, a final chunk with ``usage``, then
``data: [DONE]``. The reply depends on the last user message:

* it contains ``slow``: 40 chunks, 0.25 s apart (time to press Stop);
* it contains ``fail``: HTTP 500 with an OpenAI-style error body;
* it contains ``markdown``: a reply with a heading, a list and a code block;
* otherwise ``Reply <n> to: <text>``, ``n`` counting the requests so far.

While :attr:`StubProvider.breaks` is above 0, a reply breaks off: it streams the first
half of its chunks, then closes the connection with no final chunk and no ``[DONE]``
(each such reply counts ``breaks`` down by one, so a retry afterwards succeeds).

A base URL with a mode before ``/v1`` (:meth:`StubProvider.url`) misbehaves on purpose,
whatever the message:

* ``never``: reads the request and never answers;
* ``stall``: sends the response headers, then nothing;
* ``drip``: streams one chunk every :attr:`StubProvider.drip_delay` seconds, on and on;
* ``status-<code>``: answers HTTP ``<code>`` with an OpenAI-style error body.

In these modes the stub watches the connection and records the request's number in
:attr:`StubProvider.closed` when the client closes it (see :meth:`wait_closed`), so a
test can prove that a request it gave up on was really aborted.

Errors a test sets on the stub (the default base URL), for streaming requests (a summary
request is never refused by them), checked in this order:

* :attr:`StubProvider.errors`: a queue of ``(status, error)`` answers; each request takes
  the first one (e.g. a non-overflow 400 or a 500, :func:`openai_error`); status 200
  opens the stream and sends ``error`` as its one event (a gateway's error mid-stream);
* :attr:`StubProvider.overflow_above`: a request whose ``messages`` (their JSON, as
  :func:`messages_chars` measures it) are longer than this many characters is refused
  with OpenAI's HTTP 400 ``context_length_exceeded`` (:data:`OVERFLOW_MESSAGE`); each
  such refusal is numbered in :attr:`StubProvider.refused`.

A request with ``stream`` false is a summary request (the panel asks for an attachment's
summary in one JSON reply): it is answered ``Summary <n> of <chars> characters.`` as a
``chat.completion``, or with HTTP 500 while :attr:`StubProvider.summary_fails` is set;
:meth:`StubProvider.summary_calls` counts them.

CORS headers are sent, so an extension page can call it without host permissions.
Every request is recorded in :attr:`StubProvider.requests` (path, mode, headers, body).
"""

from __future__ import annotations

import http.server
import json
import select
import socket
import threading
import time
from typing import Any

MARKDOWN_REPLY = (
    "## Plan\n\nHere is **bold**, *italic* and `code`.\n\n- first item\n- second item\n\n"
    "```python\nprint('hello')\n```\n\nSee [the docs](https://example.com/docs)."
)
#: The error message of ``status-401`` (what OpenAI says for a wrong key).
BAD_KEY_MESSAGE = "Incorrect API key provided."
#: How long a misbehaving mode holds a connection the client does not close.
HOLD_SECONDS = 60.0

#: OpenAI's words for a request over the model's window (``{tokens}``: the request's).
OVERFLOW_MESSAGE = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted "
    "in {tokens} tokens. Please reduce the length of the messages."
)

Handler = http.server.BaseHTTPRequestHandler


def openai_error(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def messages_chars(body: dict[str, Any]) -> int:
    """The size the stub measures a request by: the length of its ``messages`` as JSON."""
    return len(json.dumps(body.get("messages") or [], ensure_ascii=False, separators=(",", ":")))


def overflow_error(chars: int) -> dict[str, Any]:
    """OpenAI's ``context_length_exceeded`` body for a request of ``chars`` characters."""
    return openai_error(
        OVERFLOW_MESSAGE.format(tokens=chars // 4),
        "invalid_request_error",
        "context_length_exceeded",
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


def _mode_of(path: str) -> str:
    """``"never"`` for ``/never/v1/chat/completions``; ``""`` for ``/v1/...``."""
    return path.split("/v1/", 1)[0].strip("/")


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    event = {
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return f"data: {json.dumps(event)}\n\n".encode()


def _head(handler: Handler, status: int, headers: dict[str, str]) -> None:
    """Send the status line and ``headers``, with CORS open to any origin (the extension's)."""
    handler.send_response(status)
    for name, value in {**headers, "Access-Control-Allow-Origin": "*"}.items():
        handler.send_header(name, value)
    handler.end_headers()


def _send_json(handler: Handler, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    _head(handler, status, {"Content-Type": "application/json", "Content-Length": str(len(data))})
    handler.wfile.write(data)


def _start_stream(handler: Handler) -> None:
    _head(
        handler,
        200,
        {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Connection": "close"},
    )
    handler.wfile.flush()


def _peer_closed(sock: socket.socket, wait: float) -> bool:
    """Whether the client closed ``sock`` (waits up to ``wait`` s for it to say so)."""
    ready, _, _ = select.select([sock], [], [], wait)
    if not ready:
        return False
    try:
        return sock.recv(4096) == b""  # anything else the client sends is dropped
    except OSError:
        return True


class StubProvider:
    """The server; use as a context manager. ``base_url`` ends in ``/v1``."""

    def __init__(self, chunk_delay: float = 0.02, drip_delay: float = 0.1) -> None:
        self.chunk_delay = chunk_delay
        self.drip_delay = drip_delay
        self.release: threading.Event | None = None
        """When set to an Event, a reply's last chunk waits until the Event is set: a test
        can then look at the panel mid-stream, however slow the machine."""
        self.breaks = 0
        """How many of the next replies break off midway (see the module's docstring)."""
        self.errors: list[tuple[int, dict[str, Any]]] = []
        """Answers the next requests take, one each, before any reply (status, body)."""
        self.overflow_above: int | None = None
        """Refuse a request whose messages are over this many characters (None: never)."""
        self.summary_fails = False
        """While True, a summary request (``stream`` false) is answered HTTP 500."""
        self.requests: list[dict[str, Any]] = []
        self.refused: list[int] = []
        """The numbers (1-based) of the requests refused as over the window."""
        self.closed: list[int] = []
        self.lock = threading.Condition()
        self.stopping = threading.Event()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _handler_class(self) -> type[Handler]:
        stub = self

        class StubHandler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

            def do_OPTIONS(self) -> None:  # noqa: N802 - http.server naming
                _head(
                    self,
                    204,
                    {
                        "Access-Control-Allow-Headers": "authorization, content-type",
                        "Access-Control-Allow-Methods": "POST, OPTIONS",
                        "Content-Length": "0",
                    },
                )

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                mode = _mode_of(self.path)
                with stub.lock:
                    stub.requests.append(
                        {
                            "path": self.path,
                            "mode": mode,
                            "headers": dict(self.headers),
                            "body": body,
                        }
                    )
                    count = len(stub.requests)
                    stub.lock.notify_all()
                if mode:
                    stub.misbehave(self, mode, body, count)
                else:
                    stub.respond(self, body, count)

        return StubHandler

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def url(self, mode: str) -> str:
        """The base URL of a misbehaving ``mode``, e.g. ``http://127.0.0.1:PORT/never/v1``."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/{mode}/v1"

    def __enter__(self) -> StubProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def summary_calls(self) -> list[dict[str, Any]]:
        """The summary requests received so far (``stream`` false), in order."""
        with self.lock:
            return [r for r in self.requests if r["mode"] == "" and not r["body"].get("stream")]

    def chat_calls(self) -> list[dict[str, Any]]:
        """The chat requests (streaming, the default base URL) received so far, in order."""
        with self.lock:
            return [r for r in self.requests if r["mode"] == "" and r["body"].get("stream")]

    def wait_requests(self, count: int, timeout: float = 30.0) -> bool:
        """Wait until at least ``count`` requests have arrived."""
        with self.lock:
            return self.lock.wait_for(lambda: len(self.requests) >= count, timeout)

    def wait_closed(self, number: int, timeout: float = 10.0) -> bool:
        """Wait until the client has closed the connection of request ``number`` (1-based)."""
        with self.lock:
            return self.lock.wait_for(lambda: number in self.closed, timeout)

    def _hold(self, handler: Handler, drip: str | None) -> bool:
        """Hold the connection open until the client closes it.

        Returns True when the client closed it, False when the stub stopped or gave up
        first. When ``drip`` names a model, a chunk goes out every ``drip_delay`` s.
        """
        deadline = time.monotonic() + HOLD_SECONDS
        wait = self.drip_delay if drip else 0.05
        while not self.stopping.is_set() and time.monotonic() < deadline:
            if _peer_closed(handler.connection, wait):
                return True
            if drip:
                try:
                    handler.wfile.write(_chunk(drip, {"content": "drip "}))
                    handler.wfile.flush()
                except OSError:
                    return True
        return False

    def misbehave(self, handler: Handler, mode: str, body: dict[str, Any], n: int) -> None:
        """Answer one request of a misbehaving mode (see the module's docstring)."""
        handler.close_connection = True
        if mode.startswith("status-"):
            status = int(mode.removeprefix("status-"))
            message = BAD_KEY_MESSAGE if status == 401 else f"stub provider: HTTP {status}"
            _send_json(handler, status, {"error": {"message": message, "type": "stub"}})
            return
        if mode in ("stall", "drip"):
            _start_stream(handler)
        drip = str(body.get("model") or "stub-model") if mode == "drip" else None
        if self._hold(handler, drip):
            with self.lock:
                self.closed.append(n)
                self.lock.notify_all()

    def refusal(self, body: dict[str, Any], n: int) -> tuple[int, dict[str, Any]] | None:
        """The error this request gets, if any: a queued one, else an overflow."""
        with self.lock:
            if self.errors:
                return self.errors.pop(0)
            chars = messages_chars(body)
            if self.overflow_above is not None and chars > self.overflow_above:
                self.refused.append(n)
                return 400, overflow_error(chars)
        return None

    def summarize(self, handler: Handler, body: dict[str, Any], n: int) -> None:
        """Answer a summary request (``stream`` false) with one ``chat.completion``."""
        if self.summary_fails:
            _send_json(handler, 500, openai_error("stub provider: summary failed", "server_error"))
            return
        model = str(body.get("model") or "stub-model")
        text = f"Summary {n} of {messages_chars(body)} characters."
        message = {"role": "assistant", "content": text}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        _send_json(
            handler,
            200,
            {
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": usage,
            },
        )

    def respond(self, handler: Handler, body: dict[str, Any], n: int) -> None:
        """Answer one chat-completions request."""
        if not body.get("stream"):
            handler.close_connection = True
            self.summarize(handler, body, n)
            return
        refused = self.refusal(body, n)
        if refused is not None:
            handler.close_connection = True
            status, error = refused
            if status == 200:  # an error event in an opened stream
                _start_stream(handler)
                handler.wfile.write(f"data: {json.dumps(error)}\n\n".encode())
                handler.wfile.flush()
                return
            _send_json(handler, status, error)
            return
        text = _last_user_text(body)
        if "fail" in text:
            _send_json(handler, 500, {"error": {"message": "stub provider: simulated failure"}})
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
        with self.lock:
            broken = self.breaks > 0
            if broken:
                self.breaks -= 1
        if broken:
            words = words[: max(1, len(words) // 2)]
        _start_stream(handler)
        model = str(body.get("model") or "stub-model")
        try:
            for word in words:
                handler.wfile.write(_chunk(model, {"content": word}))
                handler.wfile.flush()
                time.sleep(delay)
            if broken:  # the connection closes here: no final chunk, no [DONE]
                handler.close_connection = True
                return
            release = self.release
            if release is not None:
                release.wait(HOLD_SECONDS)
            usage = {
                "prompt_tokens": 10 + len(text.split()),
                "completion_tokens": len(words),
                "total_tokens": 10 + len(text.split()) + len(words),
            }
            handler.wfile.write(_chunk(model, {}, "stop", usage=usage) + b"data: [DONE]\n\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped the stream
        handler.close_connection = True
