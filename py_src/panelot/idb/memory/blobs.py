"""The memory core's Blobs and files: :class:`~panelot.idb.blobs.MemoryBlob` values.

CPython has no disk-backed Blob to build an export into, so the memory core's file is
one MemoryBlob, assembled when it is finished.
"""

from __future__ import annotations

import base64
from typing import Any

from panelot.idb.blobs import MemoryBlob, blob_bytes
from panelot.idb.errors import ValidationError
from panelot.idb.files import ByteSource, BytesSource

__all__ = ["MEMORY_BLOBS", "MemoryBlobs", "MemoryParts"]


class MemoryBlobs:
    """The memory core's :class:`~panelot.idb.core.Blobs`: MemoryBlob values."""

    def make(self, data: bytes, mime: str) -> MemoryBlob:
        """A MemoryBlob holding a copy of ``data``."""
        return MemoryBlob(bytes(data), mime)

    def owns(self, value: Any) -> bool:
        """Whether ``value`` is a MemoryBlob."""
        return isinstance(value, MemoryBlob)

    def size(self, value: Any) -> int:
        """Byte size of a MemoryBlob."""
        return _blob(value).size

    async def read(self, value: Any) -> bytes:
        """A MemoryBlob's bytes."""
        return _blob(value).data

    def file(self) -> MemoryParts:
        """A new file, finished as one MemoryBlob."""
        return MemoryParts()

    def source(self, value: Any) -> ByteSource:
        """A MemoryBlob read in ranges."""
        return BytesSource(_blob(value).data)


def _blob(value: Any) -> MemoryBlob:
    if not isinstance(value, MemoryBlob):
        raise ValidationError("not a Blob", field="bytes")
    return value


MEMORY_BLOBS = MemoryBlobs()
"""The one :class:`MemoryBlobs` every memory core shares."""


class MemoryParts:
    """The memory core's file being built: bytes, and Blobs whose base64 goes there."""

    def __init__(self) -> None:
        self._parts: list[bytes | _Pending] = []

    def part(self, data: bytes) -> None:
        """Append bytes."""
        self._parts.append(data)

    def blob(self, blob: Any) -> None:
        """Append the base64 of ``blob``'s contents (read by :meth:`finish`)."""
        self._parts.append(_Pending(blob))

    async def finish(self, mime: str) -> MemoryBlob:
        """The file as one MemoryBlob."""
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
