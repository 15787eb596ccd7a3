"""Files in the browser: an export built as a JS Blob of parts, a Blob read in ranges.

:class:`JsBlobParts` turns each flushed piece of an export's text into a JS Blob at once
(so Python's heap holds one piece at a time) and the Blobs of attachments into the
base64 of their contents without their bytes ever entering Python, all in one call
(``panelot_js.base64Blobs``); the file is ``new Blob(parts)``, which Chromium composes
without copying the parts. :class:`JsBlobSource` reads a JS Blob (a ``File`` from a
file picker) one range at a time, and has the browser compute its SHA-256 (WebCrypto,
off the main thread) while Python parses it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from panelot.idb.browser.convert import wiring_helper

__all__ = ["NATIVE_DIGEST_MAX", "JsBlobParts", "JsBlobSource"]

NATIVE_DIGEST_MAX = 128 * 1024 * 1024
"""Largest file the browser hashes itself: WebCrypto takes the whole contents at once,
so a larger file is hashed by Python chunk by chunk, as it is read."""


class JsBlobParts:
    """Builds the export file as a JS Blob of parts: a :class:`~panelot.idb.files.FileParts`."""

    def __init__(self) -> None:
        self._parts: list[Any] = []
        self._pending: list[int] = []

    def part(self, data: bytes) -> None:
        """Append bytes, as a JS Blob of their own."""
        self._parts.append(wiring_helper().blobFromBytes(data, ""))

    def blob(self, blob: Any) -> None:
        """Append the base64 of a JS Blob's contents (made by :meth:`finish`)."""
        self._pending.append(len(self._parts))
        self._parts.append(blob)

    async def finish(self, mime: str) -> Any:
        """The file: one JS Blob of every part, attachments as their base64."""
        helper = wiring_helper()
        if self._pending:
            encoded = await helper.base64Blobs([self._parts[i] for i in self._pending])
            for i, blob in zip(self._pending, encoded, strict=True):
                self._parts[i] = blob
        parts, self._parts, self._pending = self._parts, [], []
        return helper.blobFromParts(parts, mime)


class JsBlobSource:
    """A :class:`~panelot.idb.files.ByteSource` over a JS Blob or File.

    It is also a :class:`~panelot.idb.files.HostDigest`: up to
    :data:`NATIVE_DIGEST_MAX` bytes, the browser computes the SHA-256.
    """

    def __init__(self, blob: Any) -> None:
        if not bool(wiring_helper().isBlob(blob)):
            raise TypeError("JsBlobSource needs a JS Blob or File")
        self.blob = blob
        self._size = int(blob.size)

    @property
    def size(self) -> int:
        """Total size in bytes."""
        return self._size

    def read(self, start: int, end: int) -> Awaitable[bytes]:
        """The bytes from ``start`` up to ``end``; the browser starts reading at once."""
        return _bytes_of(self.blob.slice(start, end).arrayBuffer())

    def sha256(self) -> Awaitable[str | None] | None:
        """The contents' SHA-256 (hex) by WebCrypto, started now; None past the limit."""
        if self._size > NATIVE_DIGEST_MAX:
            return None
        promise = wiring_helper().sha256Blob(self.blob)  # None: this context has no WebCrypto
        return None if promise is None else _hex_of(promise)


async def _bytes_of(promise: Any) -> bytes:
    buffer = await promise
    data: bytes = buffer.to_bytes()
    return data


async def _hex_of(promise: Any) -> str | None:
    digest = await promise
    return None if digest is None else str(digest)
