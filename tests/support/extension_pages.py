"""Pages of the session's extension profile, its ``chrome.storage.local``, commands from them.

For the settings, credential and legacy-import tests, which share the session's
extension (``extension_context`` in tests/conftest.py) and clean up what they store.
Commands go through :class:`panelot.testing.PageStore`.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import BrowserContext, Page

from panelot.testing import PageStore, wait_ready

__all__ = ["UI_KEY", "envelope", "open_page", "storage_remove", "storage_set"]

#: The ``chrome.storage.local`` key of the ``ui`` settings group.
UI_KEY = "settings.ui"


def open_page(context: BrowserContext, extension_id: str) -> Page:
    """A booted sidepanel.html tab of the extension."""
    page = context.new_page()
    page.goto(f"chrome-extension://{extension_id}/sidepanel.html")
    wait_ready(page)
    return page


def storage_set(page: Page, items: dict[str, Any]) -> None:
    """chrome.storage.local.set from the page."""
    page.evaluate("(items) => chrome.storage.local.set(items)", items)


def storage_remove(page: Page, keys: list[str]) -> None:
    """chrome.storage.local.remove of explicit keys."""
    page.evaluate("(keys) => chrome.storage.local.remove(keys)", keys)


def envelope(
    page: Page, kind: str, payload: dict[str, Any], submission_id: str | None = None
) -> dict[str, Any]:
    """``panelot.send``'s terminal envelope of a command from client ``test``."""
    return PageStore(page, client_id="test").envelope(kind, payload, submission_id)
