"""Settings in ``chrome.storage.local``: typed, versioned groups, change events, credentials.

* :mod:`.backend` — the async key-value contract, and the in-memory backend;
* :mod:`.chrome` — ``chrome.storage.local`` through JS proxies;
* :mod:`.groups` — the groups (providers, permissions, ui, retention), defaults,
  migrations, repair;
* :mod:`.service` — :class:`Settings` (reads, writes, typed change events);
* :mod:`.credentials` — encrypted credentials behind references;
* :mod:`.active` — this context's services. Their commands and queries are in
  :mod:`panelot.api.settings`.
"""

from panelot.settings.active import Services, services, use_backend
from panelot.settings.backend import (
    ABSENT,
    Change,
    MemoryArea,
    MemoryStorageBackend,
    StorageBackend,
)
from panelot.settings.chrome import ChromeStorageBackend, chrome_storage_available
from panelot.settings.groups import GROUPS, SETTINGS_KEYS, Problem
from panelot.settings.service import Settings

__all__ = [
    "ABSENT",
    "GROUPS",
    "SETTINGS_KEYS",
    "Change",
    "ChromeStorageBackend",
    "MemoryArea",
    "MemoryStorageBackend",
    "Problem",
    "Services",
    "Settings",
    "StorageBackend",
    "chrome_storage_available",
    "services",
    "use_backend",
]
