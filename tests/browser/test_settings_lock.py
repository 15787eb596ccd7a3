"""Two extension pages save settings at the same instant: the Web Lock lets one win.

``chrome.storage.local`` has no transactions, so ``settings.set``'s read-check-write of
``expect`` runs under the Web Lock ``panelot-settings`` (``navigator.locks``, one queue
for every page and the service worker). Page A is held at the pause point
``settings.set.checked`` (checked, not yet written) while page B sends the same
``expect``: B must queue for the lock (seen in ``navigator.locks.query()``), then find
the value changed. Without the lock B passes its check and both writes "succeed".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from browser_harness import query, run_py
from extension_pages import UI_KEY, open_page, storage_remove

START = """(command) => {
  window.__settled = false;
  window.__job = window.panelot.send(command).finally(() => { window.__settled = true; });
}"""

#: Resolves once this page's settings.set has either finished or queued for the lock.
QUEUED_OR_DONE = """async () => {
  for (;;) {
    if (window.__settled) return "done";
    const { pending } = await navigator.locks.query();
    if (pending.some((lock) => lock.name === "panelot-settings")) return "queued";
    await new Promise((tick) => setTimeout(tick, 10));
  }
}"""

HOLD = """
import json, builtins
from panelot.faults import FAULTS
builtins._settings_hold = FAULTS.hold("settings.set.checked")
json.dumps(1)
"""

REACHED = """
import json, builtins
await builtins._settings_hold.reached.wait()
json.dumps(1)
"""

RELEASE = """
import json, builtins
from panelot.faults import FAULTS
builtins._settings_hold.release()
FAULTS.disarm()
json.dumps(1)
"""


def _command(sub: str, value: dict[str, Any], expect: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "settings.set",
        "clientId": "lock-test",
        "submissionId": f"{sub}-{time.monotonic_ns()}",
        "payload": {"group": "ui", "value": value, "expect": expect},
    }


@pytest.fixture
def two_pages(extension_context: tuple[BrowserContext, str]) -> Iterator[tuple[Page, Page]]:
    context, extension_id = extension_context
    a, b = open_page(context, extension_id), open_page(context, extension_id)
    storage_remove(a, [UI_KEY])
    yield a, b
    run_py(a, RELEASE)
    storage_remove(a, [UI_KEY])
    a.close()
    b.close()


def test_two_pages_racing_settings_set_one_wins(two_pages: tuple[Page, Page]) -> None:
    a, b = two_pages
    seen = query(a, "settings.get", {"group": "ui"})["value"]
    assert query(b, "settings.get", {"group": "ui"})["value"] == seen
    run_py(a, HOLD)
    a.evaluate(START, _command("a", {**seen, "theme": "dark"}, seen))
    run_py(a, REACHED)  # A has checked `expect` and not written yet
    b.evaluate(START, _command("b", {**seen, "theme": "light"}, seen))
    assert b.evaluate(QUEUED_OR_DONE) == "queued"  # B waits for A's lock
    run_py(a, RELEASE)
    won = a.evaluate("() => window.__job")
    lost = b.evaluate("() => window.__job")
    assert won["status"] == "completed", won
    assert lost["status"] == "failed", lost
    assert lost["error"]["name"] == "ConflictError" and lost["error"]["field"] == "payload.expect"
    stored = a.evaluate("async (k) => (await chrome.storage.local.get([k]))[k]", UI_KEY)
    assert stored["value"]["theme"] == "dark"
    assert query(b, "settings.get", {"group": "ui"})["value"]["theme"] == "dark"
