"""The browser host: what :mod:`panelot.runtime` gives the store it opens in a page.

Built once, by :func:`browser_host`: ``chrome.storage.local`` in an extension page (a
memory backend in a plain page such as the test harness; an extension context without
``chrome.storage``, such as an offscreen document, is refused with a
:class:`~panelot.idb.errors.MissingAPIError` unless the caller accepts settings that
live and die with the page), WebCrypto credentials where
the page has ``panelot_crypto`` (the test-only memory key store otherwise), the page's
thumbnailer (``panelot_images``), ``navigator.storage.estimate()``, the page's
``fetch`` for HTTP (:mod:`panelot.host.fetch`) and a fresh attachment budget and freed
ledger.
"""

from __future__ import annotations

from panelot.host.fetch import browser_http
from panelot.host.host import Host, Services
from panelot.host.thumbnails import BrowserThumbnailer, Thumbnailer, UnavailableThumbnailer
from panelot.idb.errors import MissingAPIError
from panelot.settings.backend import MemoryStorageBackend, StorageBackend
from panelot.settings.chrome import (
    ChromeStorageBackend,
    chrome_storage_available,
    extension_context,
)
from panelot.settings.credentials import (
    KeyStore,
    MemoryKeyStore,
    WebCryptoKeyStore,
    webcrypto_available,
)

__all__ = ["browser_estimate", "browser_host", "settings_backend"]


async def browser_estimate() -> tuple[int, int | None] | None:
    """``(usage, quota)`` from ``navigator.storage.estimate()``; ``None`` without it."""
    import js

    storage = getattr(js.navigator, "storage", None)
    if storage is None:
        return None
    raw = await storage.estimate()
    return int(raw.usage or 0), int(raw.quota or 0) or None


def _thumbnailer() -> Thumbnailer:
    try:
        return BrowserThumbnailer()
    except ImportError:  # a page without panelot_images
        return UnavailableThumbnailer()


def settings_backend(*, memory_settings: bool = False) -> StorageBackend:
    """This page's settings: ``chrome.storage.local``, or memory where there is none.

    A plain page (no ``chrome.runtime.id``: the test harness) gets the memory backend.
    An extension context without ``chrome.storage`` raises
    :class:`~panelot.idb.errors.MissingAPIError`: its settings would differ from every
    other page's and vanish with it, unnoticed. ``memory_settings=True`` accepts that
    (a benchmark's page).
    """
    if chrome_storage_available():
        return ChromeStorageBackend()
    if extension_context() and not memory_settings:
        raise MissingAPIError(
            "settings: this extension context has no chrome.storage.local (an offscreen "
            "document or a worker has none), and settings kept in memory would differ "
            "from every other page's and be lost with this one; start the runtime where "
            "chrome.storage is, or pass memorySettings: true to accept that"
        )
    return MemoryStorageBackend()


def browser_host(*, memory_settings: bool = False) -> Host:
    """The host of this page (see the module docstring); call it once, in a page.

    ``memory_settings`` is :func:`settings_backend`'s.
    """
    backend = settings_backend(memory_settings=memory_settings)
    keystore: KeyStore = WebCryptoKeyStore() if webcrypto_available() else MemoryKeyStore()
    return Host(
        Services.over(backend, keystore), _thumbnailer(), browser_estimate, http=browser_http
    )
