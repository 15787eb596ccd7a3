"""End-to-end: Settings → Sync's status line says what waits, what failed, and when all is sent.

The real extension against the open test server (tests/support/couch_server.cjs, the
``couch_servers`` fixture). Sync is saved for a database that does not exist yet, so the
panel's continuous loop fails and backs off; a conversation made meanwhile waits in the
outbox. The status line, read again while Settings → Sync is shown (no click), says the
loop's failure in the buttons' words with what to do and how many changes wait; once
the database is created on the server, the loop's next try sends them and the line says
"All changes sent." Every wait is for the words the state causes (bounded), never a
sleep.
"""

from __future__ import annotations

import json
import urllib.request
import uuid

from playwright.sync_api import Page

from behavior.sync import OPEN_ENV
from browser_harness import query
from panelot.testing import new_thread

WAIT_MS = 90_000
WAITING = (
    "() => /^\\d+ changes? waiting to be sent\\.$/"
    ".test(document.querySelector('#sync-waiting')?.textContent ?? '')"
)
ALL_SENT = (
    "() => document.querySelector('#sync-waiting')?.textContent === 'All changes sent.'"
    " && !document.querySelector('#sync-loop-error')"
)
NO_DATABASE = (
    "() => (document.querySelector('#sync-loop-error')?.textContent ?? '')"
    ".includes('No such database on the server')"
)


def _put_database(server: str, name: str) -> None:
    request = urllib.request.Request(f"{server}/{name}", method="PUT")  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        assert response.status in (201, 202), response.status


def _all_doc_ids(server: str, name: str) -> list[str]:
    with urllib.request.urlopen(f"{server}/{name}/_all_docs", timeout=30) as response:  # noqa: S310
        return [row["id"] for row in json.loads(response.read())["rows"]]


def _to_sync_settings(page: Page) -> int:
    """Settings, freshly drawn; the status line's count of finished actions."""
    while page.evaluate("() => window.panelotApp.view") != "threads":
        page.click("#nav-back")
    page.click("#nav-settings")
    status = page.wait_for_selector("#sync-status[data-action-count]")
    assert status is not None
    page.wait_for_selector("#sync-status .status-part")
    return int(status.get_attribute("data-action-count") or "0")


def test_the_status_line_says_changes_waiting_then_all_changes_sent(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = f"panelot-e2e-{uuid.uuid4().hex[:10]}"  # created later: the loop fails
    count = _to_sync_settings(panel)
    panel.fill("#sync-server", server)
    panel.fill("#sync-database", database)
    panel.click("#sync-save")  # saves and starts the continuous loop
    panel.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
    panel.wait_for_function(NO_DATABASE, timeout=WAIT_MS)  # no click: the line was read again
    error = panel.inner_text("#sync-loop-error")
    assert error.startswith("The last continuous sync failed: No such database"), error

    thread_id = new_thread(panel)  # a change while the server cannot take it
    _to_sync_settings(panel)
    panel.wait_for_function(WAITING, timeout=WAIT_MS)
    status = query(panel, "sync.status", {})
    assert status["waiting"] >= 1 and status["failure"]["source"] == "loop", status

    _put_database(server, database)  # the loop's next try finds it and sends
    panel.wait_for_function(ALL_SENT, timeout=WAIT_MS)  # and the failure is gone
    assert f"threads:{thread_id}" in _all_doc_ids(server, database)
    status = query(panel, "sync.status", {})
    assert status["waiting"] == 0 and status["failure"] is None, status
