"""Where an export's file is built: text and Blob contents, in order, never as one string.

The export hands a :class:`Sink` the file's text piece by piece and, where a Blob's
contents go, the Blob itself. The sink buffers text up to :data:`FLUSH_CHARS` and turns
it into a part of the file (a JS Blob in the browser, so Python's heap holds one part
at a time); a Blob becomes the base64 of its contents when the file is finished, after
the export's read transaction (reading a Blob is a foreign await). The parts are the
core's own (:meth:`~panelot.idb.core.Blobs.file`), and so is reading a file back
(:func:`blob_source`).
"""

from __future__ import annotations

import re
from typing import Any

from panelot.idb.blobs import MemoryBlob, blob_kind, blob_size
from panelot.idb.core import Core
from panelot.idb.errors import ValidationError
from panelot.idb.files import ByteSource, BytesSource, FileParts

__all__ = ["FLUSH_CHARS", "Sink", "blob_source", "sink_for", "utf8"]

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
    """Builds one file from text and Blobs into a core's parts; :meth:`finish` returns it."""

    def __init__(self, parts: FileParts) -> None:
        self._parts = parts
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
        self._parts.blob(blob)
        self.bytes += _base64_size(blob_size(blob))

    def flush(self) -> None:
        """Turn the buffered text into a part of the file."""
        if self._text:
            data = utf8("".join(self._text))
            self._text, self._chars = [], 0
            self.bytes += len(data)
            self._parts.part(data)

    async def finish(self, mime: str) -> Any:
        """The whole file, as a Blob of ``mime`` (of the core's kind)."""
        self.flush()
        return await self._parts.finish(mime)


def sink_for(core: Core) -> Sink:
    """The sink for a database on ``core``: JS Blob parts on the browser core."""
    return Sink(core.blobs.file())


def blob_source(value: Any) -> ByteSource:
    """A :class:`~panelot.idb.files.ByteSource` over a file of either core.

    Takes bytes, a :class:`~panelot.idb.blobs.MemoryBlob`, a JS Blob or File (in the
    browser), or a ByteSource as it is.
    """
    if isinstance(value, bytes | bytearray | memoryview):
        return BytesSource(bytes(value))
    if isinstance(value, MemoryBlob):
        return BytesSource(value.data)
    kind = blob_kind(value)
    if kind is not None:
        return kind.source(value)
    if hasattr(value, "read") and hasattr(value, "size"):
        source: ByteSource = value
        return source
    raise ValidationError("file: must be bytes, a Blob or a ByteSource", field="file")
