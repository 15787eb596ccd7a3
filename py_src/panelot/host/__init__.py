"""The host: what differs between a browser page and CPython, given to a store once.

A :class:`Host` holds the settings services (a storage backend and a key store under
them), the one HTTP call (``Host.http``), the image thumbnailer, the storage estimate
and the store's attachment state (its budget and freed ledger). No section decides
browser-or-memory by itself: it uses the host of the store it runs in.

* :mod:`.host` — :class:`Host`, :class:`Services` and :func:`memory_host` (CPython, tests);
* :mod:`.browser` — :func:`browser_host`, built once by :mod:`panelot.runtime` in a page;
* :mod:`.http` — ``Host.http``: :class:`HttpRequest`, :class:`HttpResponse` and the
  CPython implementation (``urllib``); :mod:`.fetch` — the page's (``fetch``);
* :mod:`.storage` — :class:`StorageState`: the attachment budget and the freed ledger;
* :mod:`.locks` — :data:`Locks` (a host's ``search_lock``: one search indexer per
  origin) and :func:`local_lock`, the same within one process;
* :mod:`.thumbnails` — the :class:`Thumbnailer` protocol and its browser and
  unavailable makers.
"""

from panelot.host.browser import browser_host
from panelot.host.host import Host, Services, StorageEstimate, memory_host
from panelot.host.http import Http, HttpRequest, HttpResponse
from panelot.host.locks import Locks, local_lock
from panelot.host.storage import StorageState

__all__ = [
    "Host",
    "Http",
    "HttpRequest",
    "HttpResponse",
    "Locks",
    "Services",
    "StorageEstimate",
    "StorageState",
    "browser_host",
    "local_lock",
    "memory_host",
]
