"""The host: what differs between a browser page and CPython, given to a store once.

A :class:`Host` holds the settings services (a storage backend and a key store under
them), the image thumbnailer, the storage estimate and the store's attachment state
(its budget and freed ledger). No section decides
browser-or-memory by itself: it uses the host of the store it runs in.

* :mod:`.host` — :class:`Host`, :class:`Services` and :func:`memory_host` (CPython, tests);
* :mod:`.browser` — :func:`browser_host`, built once by :mod:`panelot.runtime` in a page;
* :mod:`.storage` — :class:`StorageState`: the attachment budget and the freed ledger;
* :mod:`.thumbnails` — the :class:`Thumbnailer` protocol and its browser and
  unavailable makers.
"""

from panelot.host.browser import browser_host
from panelot.host.host import Host, Services, StorageEstimate, memory_host
from panelot.host.storage import StorageState

__all__ = ["Host", "Services", "StorageEstimate", "StorageState", "browser_host", "memory_host"]
