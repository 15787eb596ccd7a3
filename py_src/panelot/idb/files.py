"""A file's bytes as both cores hand them over: read in ranges, or built from parts.

An import reads its file from a :class:`ByteSource` (bytes in CPython, a JS Blob or
File in the browser); an export builds its file through a core's :class:`FileParts`
(one part at a time, so the whole file is never one Python string). Each core supplies
its own through its :class:`~panelot.idb.core.Blobs`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["ByteSource", "BytesSource", "FileParts", "HostDigest"]


class ByteSource(Protocol):
    """Where an export is read from: a size and byte ranges.

    ``read`` should start reading when called, not when awaited: the reader asks for
    the next range ahead of parsing the current one, so the two overlap.
    """

    @property
    def size(self) -> int:
        """Total size in bytes."""
        ...

    def read(self, start: int, end: int) -> Awaitable[bytes]:
        """The bytes from ``start`` up to ``end`` (exclusive)."""
        ...


@runtime_checkable
class HostDigest(Protocol):
    """A :class:`ByteSource` whose host can compute the contents' SHA-256 itself.

    An import asks for it once, before reading, so the host hashes the file beside the
    parse; when ``sha256`` returns None the reader hashes each chunk as it reads it.
    """

    def sha256(self) -> Awaitable[str | None] | None:
        """The SHA-256 of the contents as lowercase hex, already started; or None.

        The awaitable must never raise: it gives None if the host could not read the
        contents (the import then fails as for a file it cannot read).
        """
        ...


@dataclass(frozen=True, slots=True)
class BytesSource:
    """A :class:`ByteSource` over bytes in memory."""

    data: bytes

    @property
    def size(self) -> int:
        """Total size in bytes."""
        return len(self.data)

    async def read(self, start: int, end: int) -> bytes:
        """The bytes from ``start`` up to ``end``."""
        return self.data[start:end]


class FileParts(Protocol):
    """A file being built, in order: parts of its bytes and the base64 of Blobs."""

    def part(self, data: bytes) -> None:
        """Append bytes (a flushed piece of the file's text, as UTF-8)."""
        ...

    def blob(self, blob: Any) -> None:
        """Append the base64 of ``blob``'s contents (resolved by :meth:`finish`)."""
        ...

    async def finish(self, mime: str) -> Any:
        """The whole file, as a Blob of ``mime``."""
        ...
