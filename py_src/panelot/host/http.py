"""``Host.http``: the one HTTP call a section gets, and its CPython implementation.

A call is an :class:`HttpRequest` (method, URL, headers, a body of bytes, a response
size limit, a timeout) answered by an :class:`HttpResponse` (status, headers, body).
A request with ``blob`` (a MIME type) gets a successful body as a Blob instead
(:attr:`HttpResponse.blob`, with its :attr:`HttpResponse.md5` computed chunk by chunk
as it arrives): in a page the body's chunks go from the stream into a JS Blob and only
one chunk at a time is copied into Python's heap (for the digest), so an attachment's
bytes are never held whole there; in CPython it is a
:class:`~panelot.idb.blobs.MemoryBlob`.
Any status is an answer: deciding what a 401 or a 500 means is the caller's. What is
not an answer raises :class:`~panelot.errors.NetworkError`: no connection, a timeout
(of the whole call: a body still coming after it is given up),
a response larger than its limit, a body cut short (shorter than its
``Content-Length``, or a chunked body that stops). No redirect is followed (a 3xx is an answer),
so headers only ever go to the URL asked. Its message names the method and the URL, never a
header (so never an ``Authorization``), and a URL with credentials in it is refused
before anything is sent.

:func:`urllib_http` is the CPython implementation (:func:`~panelot.host.memory_host`
gives it): ``urllib.request`` in a worker thread (``asyncio.to_thread``). In a page the
host has the page's ``fetch`` instead (:mod:`panelot.host.fetch`). A section never
asks which one it has.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from panelot.errors import NetworkError
from panelot.idb.blobs import MemoryBlob

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_TIMEOUT",
    "Http",
    "HttpRequest",
    "HttpResponse",
    "check_url",
    "over_limit",
    "urllib_http",
]

DEFAULT_LIMIT = 16 * 1024 * 1024
"""A response's size limit unless the request says otherwise: 16 MiB."""

DEFAULT_TIMEOUT = 30.0
"""Seconds a request may take unless it says otherwise."""


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    limit: int = DEFAULT_LIMIT
    """The largest response body accepted, in bytes."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds before the request is given up."""
    blob: str | None = None
    """A MIME type: a 2xx body comes as a Blob of that type (:attr:`HttpResponse.blob`)
    with its MD5, never as bytes; another status's body comes as bytes as usual."""

    def __repr__(self) -> str:  # headers and body left out: they may hold a secret
        return f"HttpRequest({self.method} {self.url})"

    @property
    def where(self) -> str:
        """``METHOD URL``, for messages."""
        return f"{self.method} {self.url}"


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """One HTTP response: its status, headers (lowercase names) and body."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    blob: Any = None
    """The body as a Blob (a request with ``blob``, a 2xx answer); ``body`` is then empty."""
    md5: bytes | None = None
    """The MD5 of the Blob's bytes, computed while they were read (with :attr:`blob`)."""

    @property
    def ok(self) -> bool:
        """Whether the status is 2xx."""
        return 200 <= self.status < 300


Http = Callable[[HttpRequest], Awaitable[HttpResponse]]
"""The host's HTTP call."""


def check_url(req: HttpRequest) -> None:
    """Refuse a URL that is not http(s) or that carries credentials (``NetworkError``)."""
    parts = urllib.parse.urlsplit(req.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NetworkError(f"{req.method}: not an http(s) URL", field="url")
    if parts.username is not None or parts.password is not None:
        raise NetworkError(f"{req.method}: credentials in a URL are refused", field="url")


def over_limit(req: HttpRequest, size: int) -> NetworkError:
    """The error of a response of ``size`` bytes (or more) over ``req.limit``."""
    return NetworkError(f"{req.where}: the response is over its limit of {req.limit} bytes")


@functools.cache
def _opener() -> Any:
    """A ``urllib`` opener that follows no redirect (a 3xx is the answer).

    ``urllib.request`` is imported here, in CPython only: it pulls in ``http.client``
    and ``email``, which a page never needs (its modules all go in the memory snapshot).
    """
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirect())


_CHUNK = 64 * 1024


def _read_by(response: Any, req: HttpRequest, deadline: float) -> bytes:
    """The body, read in chunks up to ``req.limit`` bytes and until ``deadline``.

    ``urllib``'s timeout is per socket read: a server sending a byte at a time would
    never reach it.
    """
    parts: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise NetworkError(f"{req.where}: no answer within {req.timeout:g} s")
        chunk = response.read1(min(_CHUNK, req.limit + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > req.limit:
            raise over_limit(req, size)


def _send(req: HttpRequest) -> HttpResponse:
    """The blocking request (run in a worker thread)."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + req.timeout
    request = urllib.request.Request(
        req.url, data=req.body, headers=dict(req.headers), method=req.method
    )
    try:
        response = _opener().open(request, timeout=req.timeout)
    except urllib.error.HTTPError as answer:  # a status is an answer, not an error
        response = answer
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise NetworkError(f"{req.where}: {type(exc).__name__}: {reason}") from None
    import http.client

    with response:
        headers = {k.lower(): v for k, v in response.headers.items()}
        try:
            body = _read_by(response, req, deadline)
        except (OSError, ValueError, http.client.HTTPException) as exc:
            raise NetworkError(f"{req.where}: reading the response: {exc!r}") from None
        length = headers.get("content-length", "")
        if length.isdigit() and len(body) < int(length):  # urllib returns a cut body as is
            raise NetworkError(
                f"{req.where}: the response was cut short ({len(body)} of {length} bytes)"
            )
        status = int(response.status)
        if req.blob is not None and 200 <= status < 300:
            md5 = hashlib.md5(body, usedforsecurity=False).digest()
            return HttpResponse(status, headers, b"", MemoryBlob(body, req.blob), md5)
        return HttpResponse(status, headers, body)


async def urllib_http(req: HttpRequest) -> HttpResponse:
    """:data:`Http` in CPython: ``urllib.request`` in a worker thread."""
    check_url(req)
    return await asyncio.to_thread(_send, req)
