"""Test the extension end to end from pytest: a pytest-playwright plugin and its helpers.

:mod:`panelot.testing.plugin` holds the fixtures (``panelot_panel``, ``panelot_store``,
...); :class:`PageStore` is the typed, synchronous handle over a page's ``window.panelot``
(not the runtime's async :class:`panelot.PanelotStore`); :mod:`panelot.testing.panel`
launches Chromium with the extension and drives the panel;
:mod:`panelot.testing.stub_provider` is a local OpenAI-compatible provider. Host-side
only (Playwright, pytest): nothing in the runtime imports it. See docs/testing.md.
"""

from panelot.testing.panel import (
    API_KEY,
    BootError,
    ExtensionContext,
    Launcher,
    attach,
    configure_provider,
    edit_message,
    last_id,
    launch_extension,
    new_thread,
    open_panel,
    open_thread,
    send_message,
    to_list,
    wait_ready,
    wait_reply,
    wait_thread_shown,
)
from panelot.testing.store import (
    PageLiveQuery,
    PageStore,
    SeededThread,
    StoreError,
    error_class,
    raw_bytes,
)
from panelot.testing.stub_provider import StubProvider

__all__ = [
    "API_KEY",
    "BootError",
    "ExtensionContext",
    "Launcher",
    "PageLiveQuery",
    "PageStore",
    "SeededThread",
    "StoreError",
    "StubProvider",
    "attach",
    "configure_provider",
    "edit_message",
    "error_class",
    "last_id",
    "launch_extension",
    "new_thread",
    "open_panel",
    "open_thread",
    "raw_bytes",
    "send_message",
    "to_list",
    "wait_ready",
    "wait_reply",
    "wait_thread_shown",
]
