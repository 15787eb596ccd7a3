"""Where an export's file is built: text and Blob contents, in order, never as one string.

The export hands a :class:`Sink` the file's text piece by piece and, where a Blob's
contents go, the Blob itself. The sink buffers text up to :data:`FLUSH_CHARS` and turns
it into a part of the file (a JS Blob in the browser, so Python's heap holds one part
at a time); a Blob becomes the base64 of its contents when the file is finished, after
the export's read transaction (reading a Blob is a foreign await).
"""

from __future__ import annotations

import base64
import re
from typing import Any

from panelot.idb.blobs import MemoryBlob, blob_bytes, blob_size, is_blob, uses_js_blobs
from panelot.idb.errors import ValidationError
from panelot.idb.transfer.reader import ByteSource, BytesSource

__all__ = ["FLUSH_CHARS", "MemorySink", "Sink", "blob_source", "sink_for", "utf8"]

FLUSH_CHARS = 1024 * 1024
"""Text buffered before it becomes a part of the file."""

_LONE = re.compile(r"[\ud800-\udfff]")


def utf8(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (only inside a JSON string) becomes its escape."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def _base64_size(size: int) -> int:
    return 4 * ((size + 2) // 3)


class Sink:
    """Builds one file from text and Blobs; :meth:`finish` returns it."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._chars = 0
        self.bytes = 0
        """Bytes of the file so far (Blob contents counted as their base64)."""

    def text(self, piece: str) -> None:
        """Append text."""
        self._text.append(piece)
        self._chars += len(piece)
        if self._chars >= FLUSH_CHARS:
            self.flush()

    def blob(self, blob: Any) -> None:
        """Append the base64 of ``blob``'s contents (resolved by :meth:`finish`)."""
        self.flush()
        self._blob(blob)
        self.bytes += _base64_size(blob_size(blob))

    def flush(self) -> None:
        """Turn the buffered text into a part of the file."""
        if self._text:
            data = utf8("".join(self._text))
            self._text, self._chars = [], 0
            self.bytes += len(data)
            self._part(data)

    def _part(self, data: bytes) -> None:
        raise NotImplementedError

    def _blob(self, blob: Any) -> None:
        raise NotImplementedError

    async def finish(self, mime: str) -> Any:
        """The whole file, as a Blob of ``mime``."""
        raise NotImplementedError


class MemorySink(Sink):
    """The memory core's sink: the file is a :class:`~panelot.idb.blobs.MemoryBlob`."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes | Any] = []

    def _part(self, data: bytes) -> None:
        self._parts.append(data)

    def _blob(self, blob: Any) -> None:
        self._parts.append(_Pending(blob))

    async def finish(self, mime: str) -> MemoryBlob:
        """The file as one MemoryBlob (CPython has no disk-backed Blob to build parts into)."""
        self.flush()
        out = bytearray()
        for part in self._parts:
            if isinstance(part, _Pending):
                out += base64.b64encode(await blob_bytes(part.blob))
            else:
                out += part
        self._parts = []
        return MemoryBlob(bytes(out), mime)


class _Pending:
    """A Blob whose base64 goes here."""

    __slots__ = ("blob",)

    def __init__(self, blob: Any) -> None:
        self.blob = blob


def sink_for(core: Any) -> Sink:
    """The sink for a database on ``core``: JS Blob parts on the browser core."""
    if uses_js_blobs(core):
        from panelot.idb.browser.files import JsBlobSink

        return JsBlobSink()
    return MemorySink()


def blob_source(value: Any) -> ByteSource:
    """A :class:`~panelot.idb.transfer.reader.ByteSource` over a file of either core.

    Takes bytes, a :class:`~panelot.idb.blobs.MemoryBlob`, a JS Blob or File (in the
    browser), or a ByteSource as it is.
    """
    if isinstance(value, bytes | bytearray | memoryview):
        return BytesSource(bytes(value))
    if isinstance(value, MemoryBlob):
        return BytesSource(value.data)
    if is_blob(value):
        from panelot.idb.browser.files import JsBlobSource

        return JsBlobSource(value)
    if hasattr(value, "read") and hasattr(value, "size"):
        source: ByteSource = value
        return source
    raise ValidationError("file: must be bytes, a Blob or a ByteSource", field="file")
