"""The browser core's change channel: Dexie's ``x-storagemutated-1`` protocol.

``web/changes.mjs`` (``openChannel``, part of the ``panelot_js`` helper) dispatches each
published set as a ``CustomEvent`` on the global object and posts it on
``BroadcastChannel("x-storagemutated-1")``, exactly as Dexie 4 announces its own
commits, and calls back with every set it hears from Dexie or from other contexts.
The other connections of this interpreter get the set directly, as Python objects
(they ignore the event Python dispatched). One PyProxy per connection (the callback),
destroyed on :meth:`close`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pyodide.ffi import create_proxy

from panelot.idb.browser.convert import wiring_helper
from panelot.idb.observe.changes import ObsSet, encode_set
from panelot.idb.observe.feed import ChangeFeed

__all__ = ["BrowserChannel"]


class BrowserChannel:
    """Publishes this connection's change sets and hears every other party's."""

    _realm: ClassVar[list[BrowserChannel]] = []
    """The open channels of this interpreter."""

    def __init__(self, feed: ChangeFeed) -> None:
        self._feed = feed

        def hear(text: Any) -> None:
            feed.received(text if isinstance(text, str) else None)

        self._callback = create_proxy(hear)
        self._js: Any = wiring_helper().openChannel(self._callback)
        self._publish = self._js.publish
        self._realm.append(self)

    def publish(self, changes: ObsSet) -> None:
        """Announce one change set to the other connections, Dexie and other contexts."""
        if self._js is None:
            return
        for peer in list(self._realm):
            if peer is not self:
                peer._feed.received_set(changes)
        self._publish(encode_set(changes))

    def close(self) -> None:
        """Stop listening; destroy the callback's proxy."""
        if self._js is None:
            return
        self._realm.remove(self)
        self._js.close()
        self._js = self._publish = None  # JsProxies: released with their last reference
        self._callback.destroy()
