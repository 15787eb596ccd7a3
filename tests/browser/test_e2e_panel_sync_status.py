"""End-to-end: Settings → Sync's status line says what waits, what failed, and when all is sent.

The real extension against the open test server (tests/support/couch_server.cjs, the
``couch_servers`` fixture). Sync is saved for a database that does not exist yet, so the
panel's continuous loop fails and backs off; a conversation made meanwhile waits in the
outbox. The status line, read again while Settings → Sync is shown (no click), says the
loop's failure in the buttons' words with what to do and how many changes wait; once
the database is created on the server, the loop's next try sends them and the line says
"All changes sent." Every wait is for the words the state causes (bounded), never a
sleep.

A first sync of many documents shows its progress: saved for a database holding a
thread of 60 messages, with its ``_bulk_get`` held (the server's ``slow`` fault), the
line says "Receiving 0 of 61 documents…" while the loop's first pull waits; stopping the
loop clears it.
"""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

from playwright.sync_api import Page

from behavior.sync import OPEN_ENV
from browser_harness import query
from e2e_support import to_sync_settings
from panelot.testing import new_thread

WAIT_MS = 90_000
T0 = 1_764_000_000_000
CLOCK = f"{T0:013d}-0000-another"
NODES = 60
RECEIVING = (
    "(n) => document.querySelector('#sync-progress')?.textContent"
    " === `Receiving 0 of ${n} documents…`"
)
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


def _post(url: str, body: Any) -> Any:
    data = json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    request = urllib.request.Request(url, data, method="POST", headers=headers)  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        return json.loads(response.read())


def _write_long_thread(server: str, database: str) -> int:
    """Another client writes a thread of NODES messages (the mapping's shape); the docs."""
    tid = f"t-long-{uuid.uuid4().hex[:10]}"
    nodes = []
    for seq in range(1, NODES + 1):
        node = {
            "id": f"n-{tid}-{seq}",
            "threadId": tid,
            "parentId": nodes[-1]["id"] if nodes else None,
            "seq": seq,
            "ts": T0 + seq,
            "type": "user_message",
            "payload": {"content": [{"type": "text", "text": f"message {seq}"}]},
        }
        nodes.append(node)
    thread = {
        "id": tid,
        "title": "A long one",
        "createdAt": T0,
        "updatedAt": T0 + NODES,
        "leafId": nodes[-1]["id"],
        "tags": [],
        "pinned": False,
        "archived": False,
        "folderId": None,
        "preset": None,
        "scopeOrigins": [],
    }
    clocks = dict.fromkeys(("title", "pinned", "archived", "folderId", "tags", "preset"), CLOCK)
    clocks["leafId"] = CLOCK
    docs = [
        {"_id": f"threads:{tid}", "table": "threads", "v": 1, "record": thread, "clocks": clocks}
    ]
    docs += [{"_id": f"nodes:{n['id']}", "table": "nodes", "v": 1, "record": n} for n in nodes]
    answer = _post(f"{server}/{database}/_bulk_docs", {"docs": docs})
    assert all(r.get("ok") for r in answer), answer
    return len(docs)


def _put_database(server: str, name: str) -> None:
    request = urllib.request.Request(f"{server}/{name}", method="PUT")  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
        assert response.status in (201, 202), response.status


def _all_doc_ids(server: str, name: str) -> list[str]:
    with urllib.request.urlopen(f"{server}/{name}/_all_docs", timeout=30) as response:  # noqa: S310
        return [row["id"] for row in json.loads(response.read())["rows"]]


def _send(page: Page, type_: str) -> Any:
    """Run the command ``type_`` (no payload) through the panel's store; its response."""
    envelope = page.evaluate(
        "(type) => window.panelot.send({type, clientId: 'test',"
        " submissionId: crypto.randomUUID(), payload: {}})",
        type_,
    )
    assert envelope["status"] == "completed", envelope
    return envelope["response"]


def test_the_status_line_says_changes_waiting_then_all_changes_sent(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = f"panelot-e2e-{uuid.uuid4().hex[:10]}"  # created later: the loop fails
    count = to_sync_settings(panel)
    panel.fill("#sync-server", server)
    panel.fill("#sync-database", database)
    panel.click("#sync-save")  # saves and starts the continuous loop
    panel.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
    panel.wait_for_function(NO_DATABASE, timeout=WAIT_MS)  # no click: the line was read again
    error = panel.inner_text("#sync-loop-error")
    assert error.startswith("The last continuous sync failed: No such database"), error

    thread_id = new_thread(panel)  # a change while the server cannot take it
    to_sync_settings(panel)
    panel.wait_for_function(WAITING, timeout=WAIT_MS)
    status = query(panel, "sync.status", {})
    assert status["waiting"] >= 1 and status["failure"]["source"] == "loop", status

    _put_database(server, database)  # the loop's next try finds it and sends
    panel.wait_for_function(ALL_SENT, timeout=WAIT_MS)  # and the failure is gone
    assert f"threads:{thread_id}" in _all_doc_ids(server, database)
    status = query(panel, "sync.status", {})
    assert status["waiting"] == 0 and status["failure"] is None, status


def test_the_first_sync_of_many_documents_shows_its_progress(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = f"panelot-e2e-{uuid.uuid4().hex[:10]}"
    _put_database(server, database)
    docs = _write_long_thread(server, database)
    fault = {"path": f"/{database}/_bulk_get", "kind": "slow"}
    _post(f"{server}/_panelot_fault", fault)  # the pull waits there: its progress shows
    try:
        _send(panel, "sync.stop")  # the earlier test's loop: Save starts a new one at once
        count = to_sync_settings(panel)
        panel.fill("#sync-server", server)
        panel.fill("#sync-database", database)
        panel.click("#sync-save")  # saves and starts the loop: its first pull
        panel.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
        panel.wait_for_function(RECEIVING, arg=docs, timeout=WAIT_MS)
        status = query(panel, "sync.status", {})
        progress = status["progress"]
        assert progress["phase"] == "receiving" and progress["total"] == docs, progress
        assert progress["source"] == "loop", progress
        stopped = _send(panel, "sync.stop")
        assert stopped["progress"] is None, stopped  # cleared when it stopped
        panel.wait_for_function("() => !document.querySelector('#sync-progress')", timeout=WAIT_MS)
    finally:
        request = urllib.request.Request(f"{server}/_panelot_fault", method="DELETE")  # noqa: S310
        with urllib.request.urlopen(request, timeout=30):  # noqa: S310 - loopback
            pass
