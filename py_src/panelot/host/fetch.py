"""``Host.http`` in a page: the page's ``fetch``.

:func:`browser_http` is what :func:`~panelot.host.browser.browser_host` gives a store
in a page (an extension page, the test harness). It sends the request with ``fetch``
(``redirect: "error"``: headers never go to another URL; ``credentials: "omit"``: no
cookies), gives up after the request's timeout or when the awaiting task is cancelled
(an ``AbortController``: a stopped sync loop ends its long-poll at once), and reads the
body as a stream, giving up as soon as it passes the request's size limit (a
``Content-Length`` over it is refused before reading). A request with ``blob`` gets a
2xx body as a JS Blob built from the stream's own chunks (:func:`_read_blob`): each
chunk is copied into Python only to update the MD5 and the size count, so the whole
body is never in Python's heap. Nothing it builds is a
``PyProxy``: the options are plain JS objects, the body a ``Uint8Array`` copy.
``js`` and ``pyodide`` are imported where they are used (CPython imports this module
with :mod:`panelot.host` and never calls it).
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from panelot.errors import NetworkError
from panelot.host.http import HttpRequest, HttpResponse, check_url, over_limit

__all__ = ["browser_http"]


def _options(req: HttpRequest, signal: Any) -> Any:
    """The ``fetch`` options of ``req``: a plain JS object."""
    import js
    from pyodide.ffi import to_js

    options: dict[str, Any] = {
        "method": req.method,
        "headers": js.Object.fromEntries(to_js([[k, v] for k, v in req.headers.items()])),
        "redirect": "error",
        "credentials": "omit",
        "cache": "no-store",
        "signal": signal,
    }
    if req.body is not None:
        options["body"] = to_js(req.body)
    return to_js(options, dict_converter=js.Object.fromEntries)


async def _read(req: HttpRequest, response: Any) -> bytes:
    """The body of ``response``, read as a stream up to ``req.limit`` bytes."""
    length = response.headers.get("content-length")
    if length is not None and str(length).isdigit() and int(str(length)) > req.limit:
        raise over_limit(req, int(str(length)))
    if response.body is None:
        return b""
    reader = response.body.getReader()
    parts: list[bytes] = []
    size = 0
    try:
        while True:
            chunk = await reader.read()
            if chunk.done:
                break
            data: bytes = chunk.value.to_bytes()
            size += len(data)
            if size > req.limit:
                raise over_limit(req, size)
            parts.append(data)
    finally:
        reader.releaseLock()
    return b"".join(parts)


async def _read_blob(req: HttpRequest, response: Any, mime: str) -> tuple[Any, bytes]:
    """The body of ``response`` as a JS Blob of ``mime``, and its MD5, read as a stream.

    The chunks stay JS ``Uint8Array``s (kept in a JS array, then the Blob's parts); each
    is copied into Python only for the digest and the size count, and the read gives up
    as soon as the size passes ``req.limit``.
    """
    import js
    from pyodide.ffi import to_js

    length = response.headers.get("content-length")
    if length is not None and str(length).isdigit() and int(str(length)) > req.limit:
        raise over_limit(req, int(str(length)))
    parts = js.Array.new()
    md5 = hashlib.md5(usedforsecurity=False)
    size = 0
    if response.body is not None:
        reader = response.body.getReader()
        try:
            while True:
                chunk = await reader.read()
                if chunk.done:
                    break
                value = chunk.value
                data: bytes = value.to_bytes()  # this chunk only
                size += len(data)
                if size > req.limit:
                    raise over_limit(req, size)
                md5.update(data)
                del data
                parts.push(value)
        finally:
            reader.releaseLock()
    options = to_js({"type": mime}, dict_converter=js.Object.fromEntries)
    return js.Blob.new(parts, options), md5.digest()


async def _exchange(req: HttpRequest, signal: Any) -> HttpResponse:
    import js

    response = await js.fetch(req.url, _options(req, signal))
    headers = {str(pair[0]).lower(): str(pair[1]) for pair in response.headers.entries()}
    status = int(response.status)
    if req.blob is not None and 200 <= status < 300:
        blob, md5 = await _read_blob(req, response, req.blob)
        return HttpResponse(status, headers, b"", blob, md5)
    body = await _read(req, response)
    return HttpResponse(status, headers, body)


async def browser_http(req: HttpRequest) -> HttpResponse:
    """``Host.http`` in a page: ``fetch``, with the request's timeout and size limit."""
    import js
    from pyodide.ffi import JsException

    check_url(req)
    controller = js.AbortController.new()
    try:
        return await asyncio.wait_for(_exchange(req, controller.signal), req.timeout)
    except TimeoutError:
        controller.abort()
        raise NetworkError(f"{req.where}: no answer within {req.timeout:g} s") from None
    except asyncio.CancelledError:
        controller.abort()  # the caller gave up (a stopped sync loop): so does the request
        raise
    except JsException as exc:
        controller.abort()
        raise NetworkError(f"{req.where}: {getattr(exc, 'name', 'Error')}: {exc}") from None
