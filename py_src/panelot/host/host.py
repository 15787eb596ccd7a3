"""The :class:`Host` value a store is opened with, and its memory twin.

A host is built once: :func:`~panelot.host.browser.browser_host` in a page (by
:mod:`panelot.runtime`), :func:`memory_host` in CPython and tests. Two stores on two
hosts share nothing: each has its own settings backend, key store and credentials, and
its own attachment budget and freed ledger (:class:`~panelot.host.storage.StorageState`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from panelot.host.http import Http, urllib_http
from panelot.host.locks import Locks
from panelot.host.storage import StorageState
from panelot.host.thumbnails import Thumbnailer, UnavailableThumbnailer
from panelot.settings.backend import MemoryStorageBackend, StorageBackend
from panelot.settings.credentials import Credentials, KeyStore, MemoryKeyStore
from panelot.settings.service import Settings

__all__ = ["Host", "Services", "StorageEstimate", "memory_host", "no_estimate"]

StorageEstimate = Callable[[], Awaitable[tuple[int, int | None] | None]]
"""The browser's ``(usage, quota)`` now (``navigator.storage.estimate()``), or ``None``
where there is none (then :mod:`panelot.attachments.quota` counts the stored bytes)."""


@dataclass(slots=True)
class Services:
    """A settings backend and the services over it: ``Settings`` and ``Credentials``."""

    backend: StorageBackend
    settings: Settings
    credentials: Credentials

    @classmethod
    def over(cls, backend: StorageBackend, keystore: KeyStore) -> Services:
        """The services over ``backend``, with credentials sealed by ``keystore``."""
        return cls(backend, Settings(backend), Credentials(backend, keystore))


async def no_estimate() -> tuple[int, int | None] | None:
    """No browser estimate (CPython): always ``None``."""
    return None


@dataclass(frozen=True, slots=True)
class Host:
    """What a store gets from where it runs, chosen once when it is built."""

    services: Services
    """Settings and credentials (``chrome.storage.local`` in the extension)."""
    thumbnailer: Thumbnailer
    """Makes image thumbnails for ``thread.request``."""
    storage_estimate: StorageEstimate = no_estimate
    """The browser's storage figures, or none."""
    storage: StorageState = field(default_factory=StorageState)
    """This store's attachment budget and what its clean-ups freed (mutable, its own)."""
    search_lock: Locks | None = None
    """The lock that elects one search indexer among the contexts of an origin (a Web
    Lock, chosen by :mod:`panelot.runtime`); ``None``: every store indexes by itself."""
    http: Http = urllib_http
    """The one HTTP call (:mod:`panelot.host.http`): ``urllib`` in a worker thread in
    CPython, the page's ``fetch`` in a page (:mod:`panelot.host.fetch`)."""

    def with_settings(self, backend: StorageBackend, keystore: KeyStore) -> Host:
        """This host with settings services of its own over ``backend`` and ``keystore``.

        Everything else (the thumbnailer, the estimate, the storage state) is this host's.
        """
        return replace(self, services=Services.over(backend, keystore))


def memory_host(backend: StorageBackend | None = None, keystore: KeyStore | None = None) -> Host:
    """A CPython host: memory settings, no thumbnailer or estimate, a fresh budget, urllib.

    The settings are on ``backend`` (a fresh memory backend unless given), their
    credentials sealed by ``keystore`` (the test-only
    :class:`~panelot.settings.credentials.MemoryKeyStore` unless given).
    """
    services = Services.over(backend or MemoryStorageBackend(), keystore or MemoryKeyStore())
    return Host(services, UnavailableThumbnailer())
