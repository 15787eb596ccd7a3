"""chrome.storage.local refusing a settings write, in the real extension.

The extension holds ``unlimitedStorage``, so its area never fills up for real: the
tests replace ``chrome.storage.local.set`` in the page with one that rejects as Chrome
does when the area is full (``QUOTA_BYTES quota exceeded``) or on a disk error. The
failure must reach the caller as the project's error, leave the stored value intact
and readable, fire no change event, write no receipt, and the panel must say so.
(The memory backend's quota is covered on both cores by
tests/behavior/settings/cases_settings_failure.py.)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from browser_harness import query, run_py
from extension_pages import UI_KEY, envelope, open_page, storage_remove
from panelot.testing import open_panel

#: Chrome's message for a full chrome.storage.local area.
QUOTA_MESSAGE = "QUOTA_BYTES quota exceeded"
IO_MESSAGE = "IO error: 000003.log: Input/output error"
PROVIDERS_KEY = "settings.providers"
CRED = "cred:fail-probe"

FAIL_SETS = """(message) => {
  const area = chrome.storage.local;
  if (!window.__realSet) window.__realSet = area.set.bind(area);
  window.__refusedSets = window.__refusedSets ?? 0;
  area.set = () => { window.__refusedSets++; return Promise.reject(new Error(message)); };
}"""

RESTORE_SETS = """() => {
  if (window.__realSet) chrome.storage.local.set = window.__realSet;
  return window.__refusedSets ?? 0;
}"""

WATCH_UI = """
import json, builtins
from panelot.runtime import store
builtins._ui_seen = []
builtins._ui_stop = store().services.settings.subscribe("ui", lambda g, o, n: builtins._ui_seen.append(n.theme))
json.dumps(1)
"""

SEEN = "import json, builtins\njson.dumps(builtins._ui_seen)"

RECEIPT = """
import json
from panelot.runtime import store
from panelot.bus.receipts import receipt_id
json.dumps(await store().db.table("commandReceipts").get(receipt_id("test", {sub!r})))
"""

REVEAL = f"""
import json
from panelot.runtime import store
json.dumps(await store().services.credentials.reveal({CRED!r}))
"""


def raw(page: Page, key: str) -> Any:
    """The stored value of ``key``, read with the page's own chrome.storage.local.get."""
    return page.evaluate("async (k) => (await chrome.storage.local.get([k]))[k] ?? null", key)


def wait_seen(page: Page, want: list[str]) -> list[str]:
    """The themes the page's subscriber saw, once they equal ``want`` (or after 10 s)."""
    deadline = time.monotonic() + 10
    seen: list[str] = run_py(page, SEEN)
    while seen != want and time.monotonic() < deadline:
        time.sleep(0.05)
        seen = run_py(page, SEEN)
    return seen


@pytest.fixture
def panel(extension_context: tuple[BrowserContext, str]) -> Iterator[Page]:
    context, extension_id = extension_context
    page = open_page(context, extension_id)
    yield page
    page.evaluate(RESTORE_SETS)
    run_py(page, "import json, builtins\nbuiltins._ui_stop()\njson.dumps(1)")
    storage_remove(page, [UI_KEY, CRED, "credentials.index"])
    page.close()


def test_a_refused_settings_write_keeps_the_previous_value(panel: Page) -> None:
    ui = {"theme": "dark", "fontSize": 16}
    assert envelope(panel, "settings.set", {"group": "ui", "value": ui})["status"] == "completed"
    out = envelope(panel, "credential.set", {"secret": "sk-before-0001", "ref": CRED})
    assert out["status"] == "completed", out
    before, cred_before = raw(panel, UI_KEY), raw(panel, CRED)
    run_py(panel, WATCH_UI)

    panel.evaluate(FAIL_SETS, QUOTA_MESSAGE)
    light = {"group": "ui", "value": {"theme": "light", "fontSize": 16}}
    out = envelope(panel, "settings.set", light, "refused-1")
    assert out["status"] == "failed", out
    assert out["error"]["name"] == "QuotaExceededError"  # the project's error, not JsException
    assert QUOTA_MESSAGE in out["error"]["message"]
    assert "previous values are kept" in out["error"]["message"]
    assert raw(panel, UI_KEY) == before  # the stored value is intact ...
    assert query(panel, "settings.get", {"group": "ui"})["value"]["theme"] == "dark"  # readable
    assert run_py(panel, RECEIPT.format(sub="refused-1")) is None  # no receipt: a retry runs

    rotate = envelope(panel, "credential.rotate", {"ref": CRED, "secret": "sk-after-0002"})
    assert rotate["status"] == "failed" and rotate["error"]["name"] == "QuotaExceededError"
    assert raw(panel, CRED) == cred_before
    assert run_py(panel, REVEAL) == "sk-before-0001"  # the old secret still decrypts

    panel.evaluate(FAIL_SETS, IO_MESSAGE)  # any other refusal: UnknownError, same guarantees
    io = envelope(panel, "settings.set", light, "refused-2")
    assert io["status"] == "failed" and io["error"]["name"] == "UnknownError", io
    assert IO_MESSAGE in io["error"]["message"]
    assert raw(panel, UI_KEY) == before

    assert panel.evaluate(RESTORE_SETS) == 3  # each refused write reached chrome.storage
    again = envelope(panel, "settings.set", light, "refused-1")  # the same submission, retried
    assert again == {"status": "completed", "response": {"group": "ui", "version": 1}}
    assert raw(panel, UI_KEY)["value"]["theme"] == "light"
    # change events arrive in order: the refused writes fired none before this one
    assert wait_seen(panel, ["light"]) == ["light"]


def test_the_panel_shows_a_refused_provider_save(
    extension_context: tuple[BrowserContext, str],
) -> None:
    context, extension_id = extension_context
    page = open_panel(context, extension_id)
    try:
        before = raw(page, PROVIDERS_KEY)
        page.evaluate(FAIL_SETS, QUOTA_MESSAGE)
        page.click("#nav-settings")
        page.fill("#provider-base-url", "https://llm.example/v1")
        page.fill("#provider-model", "refused-model")
        page.click("#provider-save")
        page.wait_for_selector("#provider-status.error")
        shown = page.text_content("#provider-status") or ""
        assert shown.startswith("Could not save:") and "settings storage is full" in shown
        assert page.is_visible("#provider-status")
        assert raw(page, PROVIDERS_KEY) == before  # nothing of the new provider was stored
        value = query(page, "settings.get", {"group": "providers"})["value"]
        assert all(c.get("models") != ["refused-model"] for c in value["connections"])
        assert page.evaluate(RESTORE_SETS) >= 1
    finally:
        page.evaluate(RESTORE_SETS)
        page.close()
