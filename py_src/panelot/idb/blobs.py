"""Blob values, alike on both cores.

In the browser a record's Blob field (an attachment's ``bytes``) holds a real JS ``Blob``
(stored by IndexedDB as a Blob, so Dexie code can hand it to
``URL.createObjectURL``); Python holds it as a ``JsProxy`` handle and never copies
its contents unless asked. The memory core stores a :class:`MemoryBlob` (the bytes
and a MIME type) instead, so the same code and tests run in CPython.

Making a Blob depends on the core (:func:`make_blob` asks the database's core for its
:class:`~panelot.idb.core.Blobs`); reading one depends only on the value
(:func:`blob_bytes`, :func:`blob_size`), so a record read from either core works: a
Blob that is no :class:`MemoryBlob` is read by the Blob kind that owns it, which the
browser core registers (:func:`register_blobs`) when it is loaded. Reading a JS
Blob's contents is a foreign await: never do it inside a transaction body — read the
record first, then the Blob after the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from panelot.idb.errors import InvalidStateError, ValidationError
from panelot.idb.values import EXTRA_STORABLE

if TYPE_CHECKING:
    from panelot.idb.core import Blobs, Core

__all__ = [
    "BlobLike",
    "MemoryBlob",
    "blob_bytes",
    "blob_head",
    "blob_kind",
    "blob_size",
    "is_blob",
    "js_blob",
    "make_blob",
    "register_blobs",
]


@runtime_checkable
class BlobLike(Protocol):
    """What both Blob kinds offer: a byte size and a MIME type (``type``, as in JS)."""

    @property
    def size(self) -> int:
        """Size of the contents in bytes."""
        ...

    @property
    def type(self) -> str:
        """MIME type given when the Blob was made ("" when none)."""
        ...


@dataclass(frozen=True, slots=True)
class MemoryBlob:
    """The memory core's stand-in for a JS Blob: immutable bytes and a MIME type."""

    data: bytes
    type: str = ""

    @property
    def size(self) -> int:
        """Size of the contents in bytes."""
        return len(self.data)

    def __deepcopy__(self, memo: dict[int, Any]) -> MemoryBlob:
        return self  # immutable: the memory core's copies may share it, as a Blob is shared

    def __repr__(self) -> str:
        return f"MemoryBlob(size={self.size}, type={self.type!r})"


EXTRA_STORABLE.append(MemoryBlob)


class _HasCore(Protocol):
    """What :func:`make_blob` needs of a database: its open core."""

    @property
    def core(self) -> Core:
        """The open connection."""
        ...


_KINDS: list[Blobs] = []
"""The Blob kinds other than :class:`MemoryBlob` this process knows (the browser
core's JS Blobs, registered when it is loaded)."""


def register_blobs(kind: Blobs) -> None:
    """Let the value-only functions here (:func:`is_blob`...) recognise ``kind``'s Blobs."""
    if kind not in _KINDS:
        _KINDS.append(kind)


def blob_kind(value: Any) -> Blobs | None:
    """The registered Blob kind ``value`` is a Blob of (``None`` for a MemoryBlob or no Blob)."""
    for kind in _KINDS:
        if kind.owns(value):
            return kind
    return None


def make_blob(db: _HasCore, data: bytes, mime: str) -> Any:
    """A Blob of ``data`` for a record of ``db``: a JS Blob on the browser core.

    In the browser the bytes are copied once, straight from Python's buffer into the
    Blob (``panelot_js.blobFromBytes``). Creating a Blob is synchronous, so this may
    be called inside a transaction body.
    """
    return db.core.blobs.make(data, mime)


def is_blob(value: Any) -> bool:
    """True for a :class:`MemoryBlob` or a JS Blob handle."""
    if isinstance(value, MemoryBlob):
        return True
    return blob_kind(value) is not None


def blob_size(value: Any) -> int:
    """Byte size of a Blob, without reading its contents."""
    if isinstance(value, MemoryBlob):
        return value.size
    kind = blob_kind(value)
    if kind is not None:
        return kind.size(value)
    raise ValidationError("not a Blob", field="bytes")


async def blob_bytes(value: Any) -> bytes:
    """A copy of a Blob's contents as Python bytes.

    For a JS Blob this awaits ``blob.arrayBuffer()``: a foreign await, so never call
    it inside a transaction body.
    """
    if isinstance(value, MemoryBlob):
        return value.data
    kind = blob_kind(value)
    if kind is not None:
        return await kind.read(value)
    raise ValidationError("not a Blob", field="bytes")


async def blob_head(value: Any, limit: int) -> bytes:
    """A copy of a Blob's first ``limit`` bytes (all of it when smaller).

    Only those bytes are read (a range of a JS Blob), so a large Blob is never copied
    whole. A foreign await for a JS Blob, like :func:`blob_bytes`.
    """
    if isinstance(value, MemoryBlob):
        return value.data[:limit]
    kind = blob_kind(value)
    if kind is None:
        raise ValidationError("not a Blob", field="bytes")
    if kind.size(value) <= limit:
        return await kind.read(value)
    return await kind.source(value).read(0, limit)


def js_blob(blob: MemoryBlob) -> Any:
    """A JS Blob holding a :class:`MemoryBlob`'s bytes, for browser APIs that take one.

    Only in a page with the wiring helper (the browser runtime).
    """
    for kind in _KINDS:
        return kind.make(blob.data, blob.type)
    raise InvalidStateError("JS Blobs need the browser core, loaded in a page with panelot_js")
