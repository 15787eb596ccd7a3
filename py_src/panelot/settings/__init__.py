"""Settings in ``chrome.storage.local``: typed, versioned groups, change events, credentials.

* :mod:`.backend` — the async key-value contract, and the in-memory backend;
* :mod:`.chrome` — ``chrome.storage.local`` through JS proxies;
* :mod:`.groups` — the groups (providers, permissions, ui, retention), defaults,
  migrations, repair;
* :mod:`.service` — :class:`Settings` (reads, writes, typed change events);
* :mod:`.credentials` — encrypted credentials behind references.

Which backend and key store a store uses is its host's choice (:mod:`panelot.host`,
which bundles them as ``Services``); their commands and queries are in
:mod:`panelot.api.settings`.
"""

from panelot.settings.backend import (
    ABSENT,
    Change,
    MemoryArea,
    MemoryStorageBackend,
    StorageBackend,
)
from panelot.settings.chrome import (
    ChromeStorageBackend,
    chrome_storage_available,
    extension_context,
)
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
    "Settings",
    "StorageBackend",
    "chrome_storage_available",
    "extension_context",
]
