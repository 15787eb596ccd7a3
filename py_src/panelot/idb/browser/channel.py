"""The browser core's change channel: Dexie's ``x-storagemutated-1`` protocol.

``web/changes.mjs`` (``openChannel``, part of the ``panelot_js`` helper) dispatches each
published set as a ``CustomEvent`` on the global object and posts it on
``BroadcastChannel("x-storagemutated-1")``, exactly as Dexie 4 announces its own
commits, and calls back with every set it hears from Dexie or from other Python
contexts. One PyProxy per connection (the callback), destroyed on :meth:`close`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyodide.ffi import create_proxy

from panelot.idb.browser.convert import wiring_helper

__all__ = ["BrowserChannel"]


class BrowserChannel:
    """Publishes this context's change sets and hears every other context's."""

    def __init__(self, on_message: Callable[[Any], None]) -> None:
        def hear(text: Any) -> None:
            on_message(text if isinstance(text, str) else None)

        self._callback = create_proxy(hear)
        self._js: Any = wiring_helper().openChannel(self._callback)
        self._publish = self._js.publish

    def publish(self, message: str) -> None:
        """Announce one change set (wire JSON) to Dexie and every other context."""
        if self._js is not None:
            self._publish(message)

    def close(self) -> None:
        """Stop listening; destroy the callback's proxy."""
        if self._js is None:
            return
        self._js.close()
        self._js = self._publish = None  # JsProxies: released with their last reference
        self._callback.destroy()
