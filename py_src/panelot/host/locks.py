"""Named locks shared by the contexts of an origin: who indexes search.

A :data:`Locks` is what a :class:`~panelot.host.host.Host` may carry as its
``search_lock``: awaiting ``locks(name)`` waits until the lock ``name`` is granted and
gives the function that releases it. In the extension's runtime it is a Web Lock
(``navigator.locks``: every page and the service worker of the origin queue for it,
and a page that goes away, even by crashing, loses it); :func:`local_lock` is the same
within one process (tests, CPython), one queue per event loop.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable

__all__ = ["Locks", "Release", "local_lock"]

Release = Callable[[], None]
"""Releases a lock that was granted."""

Locks = Callable[[str], Awaitable[Release]]
"""Waits for the lock of a name; gives its release once granted."""

_LOCAL: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


async def local_lock(name: str) -> Release:
    """The lock ``name`` of this event loop, once granted; its release (idempotent)."""
    lock = _LOCAL.setdefault(asyncio.get_running_loop(), {}).setdefault(name, asyncio.Lock())
    await lock.acquire()
    held = [True]

    def release() -> None:
        if held[0]:
            held[0] = False
            lock.release()

    return release
