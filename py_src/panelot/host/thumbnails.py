"""Image thumbnails for the unseen-image budget: the protocol and the host's two makers.

A :class:`Thumbnailer` (the host's, :attr:`panelot.host.Host.thumbnailer`) turns a
stored image (its Blob: a JS ``Blob`` handle on the browser core, a
:class:`~panelot.idb.blobs.MemoryBlob` on the memory core) into a small JPEG. In a page,
:class:`BrowserThumbnailer` does it with the browser's own decoder and encoder
(``web/images.mjs``: ``createImageBitmap``, an ``OffscreenCanvas`` and
``convertToBlob``), so no image library is bundled and any format the browser shows can
be thumbnailed; :func:`panelot.host.browser_host` makes one. CPython has no image
decoder here, so the memory host's :class:`UnavailableThumbnailer` raises
:class:`ThumbnailerUnavailableError`: tests of real thumbnails run in Chromium, and
other tests inject a thumbnailer.

Thumbnailing awaits foreign work (decoding, encoding, reading a Blob): never call it
inside a transaction body.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from panelot.idb.blobs import MemoryBlob, js_blob
from panelot.idb.errors import PanelotError

__all__ = [
    "THUMBNAIL_MAX_DIM",
    "THUMBNAIL_MIME",
    "BrowserThumbnailer",
    "Thumbnail",
    "ThumbnailError",
    "Thumbnailer",
    "ThumbnailerUnavailableError",
    "UnavailableThumbnailer",
]

THUMBNAIL_MAX_DIM = 512
"""Longest side of a thumbnail in pixels (smaller images keep their size)."""

THUMBNAIL_MIME = "image/jpeg"
"""Thumbnails are JPEG: every provider accepts it, and it is the smallest for photos and
screenshots at this size. Transparent pixels are drawn on white first."""


class ThumbnailError(PanelotError):
    """The image could not be decoded or encoded (the request then sends it at full size)."""

    name = "ThumbnailError"


class ThumbnailerUnavailableError(PanelotError):
    """No thumbnailer on this platform (CPython has no image decoder here)."""

    name = "ThumbnailerUnavailableError"


@dataclass(frozen=True, slots=True)
class Thumbnail:
    """An encoded thumbnail: its bytes, MIME type and pixel size."""

    data: bytes
    mime: str
    width: int
    height: int


class Thumbnailer(Protocol):
    """Makes a thumbnail of an image Blob, its longest side at most ``max_dim``."""

    async def thumbnail(self, blob: Any, max_dim: int) -> Thumbnail:
        """Decode ``blob``, scale it down, encode it; raise :class:`ThumbnailError`."""
        ...


class UnavailableThumbnailer:
    """The thumbnailer outside a browser: it fails clearly, naming the reason."""

    async def thumbnail(self, blob: Any, max_dim: int) -> Thumbnail:
        """Always raise :class:`ThumbnailerUnavailableError`."""
        raise ThumbnailerUnavailableError(
            "thumbnails need the browser's image decoder (createImageBitmap); "
            "this runtime has none. Raise the image budget or pass a thumbnailer",
            field="imageBudget",
        )


class BrowserThumbnailer:
    """Thumbnails made in the page by ``web/images.mjs`` (registered by runtime.mjs)."""

    def __init__(self) -> None:
        self._images = importlib.import_module("panelot_images")

    async def thumbnail(self, blob: Any, max_dim: int) -> Thumbnail:
        """Decode with ``createImageBitmap``, draw on an ``OffscreenCanvas``, encode JPEG."""
        from pyodide.ffi import JsException

        source = blob
        if isinstance(blob, MemoryBlob):
            source = js_blob(blob)
        try:
            made = await self._images.thumbnail(source, max_dim)
            buffer = await made.blob.arrayBuffer()
        except JsException as exc:
            raise ThumbnailError(f"the browser could not thumbnail the image: {exc}") from None
        return Thumbnail(
            data=buffer.to_bytes(),
            mime=str(made.blob.type),
            width=int(made.width),
            height=int(made.height),
        )
