"""The browser core's change channel: Dexie's ``x-storagemutated-1`` protocol.

``web/changes.mjs`` (``openChannel``, part of the ``panelot_js`` helper) dispatches each
published set as a ``CustomEvent`` on the global object and posts it on
``BroadcastChannel("x-storagemutated-1")``, exactly as Dexie 4 announces its own
commits, and calls back with every set it hears from Dexie or from other contexts.
The other connections of this interpreter get the set directly, as Python objects
(they ignore the event Python dispatched). :meth:`BrowserChannel.later` is a
``setTimeout`` that calls back through a proxy made once. Two PyProxies per connection
(what it hears, its timers), destroyed on :meth:`close`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ClassVar

from pyodide.ffi import create_proxy

from panelot.idb.browser.convert import wiring_helper
from panelot.idb.observe.changes import ObsSet, encode_set
from panelot.idb.observe.feed import ChangeFeed

__all__ = ["BrowserChannel"]

log = logging.getLogger("panelot.idb.observe")


class BrowserChannel:
    """Publishes this connection's change sets and hears every other party's."""

    _realm: ClassVar[list[BrowserChannel]] = []
    """The open channels of this interpreter."""

    def __init__(self, feed: ChangeFeed) -> None:
        self._feed = feed

        def hear(text: Any) -> None:
            feed.received(text if isinstance(text, str) else None)

        self._due: dict[int, Callable[[], None]] = {}
        self._next = 0

        def fire(token: int) -> None:
            callback = self._due.pop(token, None)
            if callback is None:
                return
            try:
                callback()
            except Exception:  # raised into a JS timer, it would only reach the console
                log.exception("%s: a change feed timer failed", feed.db_name)

        self._callback = create_proxy(hear)
        self._fire = create_proxy(fire)
        self._js: Any = wiring_helper().openChannel(self._callback, self._fire)
        self._publish = self._js.publish
        self._later = self._js.later
        self._realm.append(self)

    def publish(self, changes: ObsSet) -> None:
        """Announce one change set to the other connections, Dexie and other contexts."""
        if self._js is None:
            return
        for peer in list(self._realm):
            if peer is not self:
                peer._feed.received_set(changes)
        self._publish(encode_set(changes))

    def later(self, delay: float, callback: Callable[[], None]) -> None:
        """Call ``callback`` once after ``delay`` seconds (a ``setTimeout``); not if closed."""
        if self._js is None:
            return
        self._next += 1
        self._due[self._next] = callback
        self._later(delay * 1000, self._next)

    def close(self) -> None:
        """Stop listening and drop pending timers; destroy the proxies."""
        if self._js is None:
            return
        self._realm.remove(self)
        self._js.close()  # a timer that fires after this calls nothing
        self._js = self._publish = self._later = None  # JsProxies: released with them
        self._due.clear()
        self._callback.destroy()
        self._fire.destroy()
