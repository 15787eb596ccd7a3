"""Blob values, alike on both cores.

In the browser a record's Blob field (an attachment's ``bytes``) holds a real JS ``Blob``
(stored by IndexedDB as a Blob, so Dexie code can hand it to
``URL.createObjectURL``); Python holds it as a ``JsProxy`` handle and never copies
its contents unless asked. The memory core stores a :class:`MemoryBlob` (the bytes
and a MIME type) instead, so the same code and tests run in CPython.

Making a Blob depends on the core (:func:`make_blob`); reading one depends only on
the value (:func:`blob_bytes`, :func:`blob_size`), so a record read from either core
works. Reading a JS Blob's contents is a foreign await: never do it inside a
transaction body — read the record first, then the Blob after the transaction.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from panelot.idb import Database
from panelot.idb.errors import ValidationError
from panelot.idb.values import EXTRA_STORABLE

__all__ = [
    "BlobLike",
    "MemoryBlob",
    "blob_bytes",
    "blob_size",
    "is_blob",
    "js_blob",
    "make_blob",
    "uses_js_blobs",
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


_JS: dict[str, Any] = {}
"""The helper's Blob functions and ``JsProxy``, looked up once, on first use (not at
import: the start-up snapshot cannot hold JS objects, and a function read off a JS
module makes a new proxy on every read)."""


def _js() -> dict[str, Any]:
    """``_JS`` filled in when running in a page with the ``panelot_js`` helper, else empty."""
    if not _JS and sys.platform == "emscripten":
        from pyodide.ffi import JsProxy

        from panelot.idb.browser import convert as browser_convert

        helper = browser_convert._ENCODER
        if helper is not None:
            _JS.update(proxy=JsProxy, isBlob=helper.isBlob, fromBytes=helper.blobFromBytes)
    return _JS


def uses_js_blobs(core: Any) -> bool:
    """Whether ``core`` (a connection) is the browser core, whose Blobs are JS Blobs."""
    browser = sys.modules.get("panelot.idb.browser.core")
    return browser is not None and isinstance(core, browser.BrowserCore)


def make_blob(db: Database, data: bytes, mime: str) -> Any:
    """A Blob of ``data`` for a record of ``db``: a JS Blob on the browser core.

    In the browser the bytes are copied once, straight from Python's buffer into the
    Blob (``panelot_js.blobFromBytes``). Creating a Blob is synchronous, so this may
    be called inside a transaction body.
    """
    if uses_js_blobs(db.core):
        from panelot.idb.browser.convert import wiring_helper

        js_blobs = _js()
        if not js_blobs:
            wiring_helper()  # raises: the browser core without the helper
        return js_blobs["fromBytes"](data, mime)
    return MemoryBlob(bytes(data), mime)


def is_blob(value: Any) -> bool:
    """True for a :class:`MemoryBlob` or a JS Blob handle."""
    if isinstance(value, MemoryBlob):
        return True
    js_blobs = _js()
    if not js_blobs:
        return False
    return isinstance(value, js_blobs["proxy"]) and bool(js_blobs["isBlob"](value))


def blob_size(value: Any) -> int:
    """Byte size of a Blob, without reading its contents."""
    if isinstance(value, MemoryBlob):
        return value.size
    if is_blob(value):
        return int(value.size)
    raise ValidationError("not a Blob", field="bytes")


async def blob_bytes(value: Any) -> bytes:
    """A copy of a Blob's contents as Python bytes.

    For a JS Blob this awaits ``blob.arrayBuffer()``: a foreign await, so never call
    it inside a transaction body.
    """
    if isinstance(value, MemoryBlob):
        return value.data
    if is_blob(value):
        buffer = await value.arrayBuffer()
        data: bytes = buffer.to_bytes()
        return data
    raise ValidationError("not a Blob", field="bytes")


def js_blob(blob: MemoryBlob) -> Any:
    """A JS Blob holding a :class:`MemoryBlob`'s bytes, for browser APIs that take one.

    Only in a page with the wiring helper (the browser runtime).
    """
    from panelot.idb.browser.convert import wiring_helper

    return wiring_helper().blobFromBytes(blob.data, blob.type)
