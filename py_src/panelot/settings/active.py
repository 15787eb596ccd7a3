"""The settings services of this context: one backend, its ``Settings`` and ``Credentials``.

:func:`services` picks, on first use, ``chrome.storage.local`` with WebCrypto
credentials in an extension page, and otherwise (CPython, the plain-page harness) a
:class:`~panelot.settings.backend.MemoryStorageBackend` — with WebCrypto credentials
when the page has them (the harness does), else the test-only memory key store.
:func:`use_backend` replaces them (tests, or a host that wants another backend).
"""

from __future__ import annotations

from dataclasses import dataclass

from panelot.settings.backend import MemoryStorageBackend, StorageBackend
from panelot.settings.chrome import ChromeStorageBackend, chrome_storage_available
from panelot.settings.credentials import (
    Credentials,
    KeyStore,
    MemoryKeyStore,
    WebCryptoKeyStore,
    webcrypto_available,
)
from panelot.settings.service import Settings

__all__ = ["Services", "services", "use_backend"]


@dataclass(slots=True)
class Services:
    """A backend and the services over it."""

    backend: StorageBackend
    settings: Settings
    credentials: Credentials


_current: Services | None = None


def _default_keystore() -> KeyStore:
    return WebCryptoKeyStore() if webcrypto_available() else MemoryKeyStore()


def use_backend(backend: StorageBackend, keystore: KeyStore | None = None) -> Services:
    """Make ``backend`` (and ``keystore``) this context's settings storage; return it."""
    global _current
    if _current is not None:
        _current.settings.close()  # its subscribers belong to the old backend
    _current = Services(
        backend, Settings(backend), Credentials(backend, keystore or _default_keystore())
    )
    return _current


def services() -> Services:
    """This context's services, created on first use (see the module docstring)."""
    if _current is None:
        backend: StorageBackend = (
            ChromeStorageBackend() if chrome_storage_available() else MemoryStorageBackend()
        )
        return use_backend(backend)
    return _current
