"""The browser core's Blobs: real JS Blobs, held in Python as ``JsProxy`` handles.

Importing this module registers them with :mod:`panelot.idb.blobs`, so that
:func:`~panelot.idb.blobs.is_blob`, :func:`~panelot.idb.blobs.blob_size` and
:func:`~panelot.idb.blobs.blob_bytes` read a JS Blob from any record.
"""

from __future__ import annotations

from typing import Any

from pyodide.ffi import JsProxy

from panelot.idb.blobs import register_blobs
from panelot.idb.browser.convert import loaded_helper, wiring_helper
from panelot.idb.browser.files import JsBlobParts, JsBlobSource
from panelot.idb.errors import ValidationError
from panelot.idb.files import ByteSource

__all__ = ["JS_BLOBS", "JsBlobs"]


class JsBlobs:
    """The browser core's :class:`~panelot.idb.core.Blobs`: JS Blobs made by the helper."""

    def __init__(self) -> None:
        self._js: dict[str, Any] = {}
        """The helper's Blob functions, looked up once, on first use (not at import: the
        start-up snapshot cannot hold JS objects, and a function read off a JS module
        makes a new proxy on every read)."""

    def _helper(self) -> dict[str, Any]:
        """``_js`` filled in when running in a page with the ``panelot_js`` helper, else empty."""
        if not self._js:
            helper = loaded_helper()
            if helper is not None:
                self._js.update(isBlob=helper.isBlob, fromBytes=helper.blobFromBytes)
        return self._js

    def make(self, data: bytes, mime: str) -> Any:
        """A JS Blob of ``data``, copied once from Python's buffer (``blobFromBytes``)."""
        js_blobs = self._helper()
        if not js_blobs:
            wiring_helper()  # raises: the browser core without the helper
        return js_blobs["fromBytes"](data, mime)

    def owns(self, value: Any) -> bool:
        """Whether ``value`` is a JS Blob handle (never without the helper)."""
        js_blobs = self._helper()
        if not js_blobs:
            return False
        return isinstance(value, JsProxy) and bool(js_blobs["isBlob"](value))

    def size(self, value: Any) -> int:
        """Byte size of a JS Blob, without reading its contents."""
        if not self.owns(value):
            raise ValidationError("not a Blob", field="bytes")
        return int(value.size)

    async def read(self, value: Any) -> bytes:
        """A copy of a JS Blob's contents: awaits ``blob.arrayBuffer()``, a foreign await."""
        if not self.owns(value):
            raise ValidationError("not a Blob", field="bytes")
        buffer = await value.arrayBuffer()
        data: bytes = buffer.to_bytes()
        return data

    def file(self) -> JsBlobParts:
        """A new export file, built as a JS Blob of parts."""
        return JsBlobParts()

    def source(self, value: Any) -> ByteSource:
        """A JS Blob or File read one range at a time."""
        return JsBlobSource(value)


JS_BLOBS = JsBlobs()
"""The one :class:`JsBlobs` of the page."""

register_blobs(JS_BLOBS)
