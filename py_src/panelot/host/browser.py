"""The browser host: what :mod:`panelot.runtime` gives the store it opens in a page.

Built once, by :func:`browser_host`: ``chrome.storage.local`` in an extension page (a
memory backend in a plain page such as the test harness), WebCrypto credentials where
the page has ``panelot_crypto`` (the test-only memory key store otherwise), the page's
thumbnailer (``panelot_images``), ``navigator.storage.estimate()``, the page's
``fetch`` for HTTP (:mod:`panelot.host.fetch`) and a fresh attachment budget and freed
ledger.
"""

from __future__ import annotations

from panelot.host.fetch import browser_http
from panelot.host.host import Host, Services
from panelot.host.thumbnails import BrowserThumbnailer, Thumbnailer, UnavailableThumbnailer
from panelot.settings.backend import MemoryStorageBackend, StorageBackend
from panelot.settings.chrome import ChromeStorageBackend, chrome_storage_available
from panelot.settings.credentials import (
    KeyStore,
    MemoryKeyStore,
    WebCryptoKeyStore,
    webcrypto_available,
)

__all__ = ["browser_estimate", "browser_host"]


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


def browser_host() -> Host:
    """The host of this page (see the module docstring); call it once, in a page."""
    backend: StorageBackend = (
        ChromeStorageBackend() if chrome_storage_available() else MemoryStorageBackend()
    )
    keystore: KeyStore = WebCryptoKeyStore() if webcrypto_available() else MemoryKeyStore()
    return Host(
        Services.over(backend, keystore), _thumbnailer(), browser_estimate, http=browser_http
    )
