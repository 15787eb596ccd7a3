"""The e2e modules' side panel: the plugin's module profile with the stub provider saved.

Each e2e module runs on a profile of its own (``panelot_module_context``, from
panelot.testing), so its database and ``chrome.storage.local`` start empty and counts
are exact. A module that needs another stub (a slower one) overrides ``panelot_stub``.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Dialog, Page

from panelot.testing import PageStore, StubProvider, configure_provider


@pytest.fixture(scope="module")
def panel(panelot_module_panel: Page, panelot_stub: StubProvider) -> Page:
    """The module's side panel with the stub provider saved through Settings.

    Dialogs are dismissed and their messages kept in ``page.dialogs``.
    """
    page = panelot_module_panel
    configure_provider(page, panelot_stub.base_url)
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.dialogs = dialogs  # type: ignore[attr-defined]
    return page


@pytest.fixture(scope="module")
def store(panel: Page) -> PageStore:
    """The typed store handle over ``panel``."""
    return PageStore(panel, client_id="e2e")
