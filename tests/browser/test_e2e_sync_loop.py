"""Continuous sync from the side panel, and the service worker's sync alarm, in real Chromium.

The server is tests/support/couch_server.cjs (express-pouchdb in memory on 127.0.0.1,
the open one of the ``couch_servers`` fixture). Another client writes to it with plain
HTTP (``_bulk_docs``, documents in the mapping's shape, docs/sync.md "The mapping").

* With a panel open and sync saved in Settings → Sync, a thread another client wrote
  appears in the panel's list with no click (the loop's long-poll pulled it), and a
  thread made in the panel reaches the server with no "Sync now" (the loop pushed it).
* A second panel queues behind the first for the ``panelot-sync`` Web Lock and its
  status line says so; closing the first hands the loop to the second.
* With no panel open, the worker's ``self.panelotRunSync()`` (what the ``panelot.sync``
  alarm runs) pulls a server document into ``panelot_v1`` and pushes a local one; with
  a panel syncing (holding the lock) it does not sync and says so; not configured, it
  loads nothing and creates no sync state database.

Every wait is for the state the test's own action causes (an id in the list, on the
server, or a lock in ``navigator.locks.query()``).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, Worker

from behavior.sync import OPEN_ENV
from browser_harness import query
from e2e_support import wait_query
from panelot.testing import ExtensionContext, Launcher, new_thread, open_panel, to_list

T0 = 1_764_000_000_000
CLOCK = f"{T0:013d}-0000-another"
SERVER_TIMEOUT_S = 60.0
RUN_SYNC = "() => self.panelotRunSync()"
HELD = "async () => (await navigator.locks.query()).held.map((l) => l.name)"
DATABASES = "async () => (await indexedDB.databases()).map((d) => d.name)"
#: The record of thread ``id`` in panelot_v1, read with IndexedDB directly (no Python).
READ_THREAD = """(id) => new Promise((resolve, reject) => {
  const open = indexedDB.open("panelot_v1");
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const get = db.transaction("threads").objectStore("threads").get(id);
    get.onsuccess = () => { db.close(); resolve(get.result ?? null); };
    get.onerror = () => { db.close(); reject(get.error); };
  };
})"""


def _http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, method=method, headers=headers)  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _new_database(server: str) -> str:
    name = f"panelot-loop-{uuid.uuid4().hex[:10]}"
    status, answer = _http("PUT", f"{server}/{name}")
    assert status in (201, 202), (status, answer)
    return name


def _write_thread(server: str, database: str, title: str) -> str:
    """Another client writes a thread and its message to the server; the thread's id."""
    tid = f"t-other-{uuid.uuid4().hex[:10]}"
    node = {
        "id": f"n-{tid}",
        "threadId": tid,
        "parentId": None,
        "seq": 1,
        "ts": T0 + 1,
        "type": "user_message",
        "payload": {"content": [{"type": "text", "text": f"{title}, written elsewhere"}]},
    }
    thread = {
        "id": tid,
        "title": title,
        "createdAt": T0,
        "updatedAt": T0 + 1,
        "leafId": node["id"],
        "tags": [],
        "pinned": False,
        "archived": False,
        "folderId": None,
        "preset": None,
        "scopeOrigins": [],
    }
    clocks = {k: CLOCK for k in ("title", "pinned", "archived", "folderId", "tags", "preset")}
    clocks["leafId"] = CLOCK
    docs = [
        {"_id": f"threads:{tid}", "table": "threads", "v": 1, "record": thread, "clocks": clocks},
        {"_id": f"nodes:{node['id']}", "table": "nodes", "v": 1, "record": node},
    ]
    status, answer = _http("POST", f"{server}/{database}/_bulk_docs", {"docs": docs})
    assert status == 201 and all(r.get("ok") for r in answer), (status, answer)
    return tid


def _wait_on_server(server: str, database: str, doc_id: str) -> dict[str, Any]:
    """Poll the server until it has ``doc_id`` (the loop's push landed); the document."""
    deadline = time.monotonic() + SERVER_TIMEOUT_S
    while True:
        status, doc = _http("GET", f"{server}/{database}/{doc_id}")
        if status == 200:
            return dict(doc)
        assert time.monotonic() < deadline, f"{doc_id} never reached the server ({status})"
        time.sleep(0.1)


def _send(page: Page, type_: str, payload: dict[str, Any]) -> Any:
    envelope = page.evaluate(
        "([type, payload]) => window.panelot.send({type, clientId: 'test',"
        " submissionId: crypto.randomUUID(), payload})",
        [type_, payload],
    )
    assert envelope["status"] == "completed", envelope
    return envelope["response"]


def _wait_held(worker: Worker, held: bool) -> None:
    """Wait until the worker sees the ``panelot-sync`` lock held (or not)."""
    deadline = time.monotonic() + SERVER_TIMEOUT_S
    while ("panelot-sync" in worker.evaluate(HELD)) != held:
        assert time.monotonic() < deadline, f"panelot-sync never {'held' if held else 'free'}"
        time.sleep(0.1)


def _syncing(status: dict[str, Any]) -> bool:
    return bool(status["running"] and status["syncing"])


def _to_sync_settings(page: Page) -> None:
    to_list(page)
    page.click("#nav-settings")
    page.wait_for_selector("#sync-status .status-part")


def test_an_open_panel_syncs_without_a_click(
    panelot_module_context: ExtensionContext, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)
    panel = panelot_module_context.open_panel()
    try:
        assert query(panel, "sync.status", {})["running"] is False  # not configured: no loop
        _to_sync_settings(panel)
        panel.fill("#sync-server", server)
        panel.fill("#sync-database", database)
        count = int(panel.get_attribute("#sync-status", "data-action-count") or "0")
        panel.click("#sync-save")
        panel.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
        assert panel.query_selector("#sync-error") is None, panel.inner_text("#sync-status")
        wait_query(panel, "sync.status", {}, _syncing)  # Save started the loop
        to_list(panel)

        # Written elsewhere: the loop's long-poll pulls it, the live list shows it.
        tid = _write_thread(server, database, "Arrived by itself")
        row = panel.wait_for_selector(
            f"#thread-list [data-thread-id='{tid}']", timeout=SERVER_TIMEOUT_S * 1000
        )
        assert row is not None and "Arrived by itself" in row.inner_text()

        # Made here: the change feed's outbox pushes it, no Sync now.
        mine = new_thread(panel)
        doc = _wait_on_server(server, database, f"threads:{mine}")
        assert doc["record"]["id"] == mine, doc
        status = wait_query(panel, "sync.status", {}, lambda s: s["waiting"] == 0)
        assert _syncing(status) and status["lastError"] is None, status
    finally:
        panel.close()


def test_one_panel_syncs_the_others_queue_and_take_over(
    panelot_module_context: ExtensionContext, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)
    setup = panelot_module_context.open_panel()  # configured by a command: no loop starts
    _send(setup, "sync.configure", {"server": server, "database": database})
    setup.close()
    # Every panel opened while sync is configured starts the loop; the first syncs.
    first = panelot_module_context.open_panel()
    second: Page | None = None
    try:
        configured = wait_query(first, "sync.status", {}, _syncing)
        assert configured["database"] == database, configured
        second = panelot_module_context.open_panel()
        queued = wait_query(second, "sync.status", {}, lambda s: s["running"])
        assert queued["syncing"] is False, queued  # the first holds the lock
        _to_sync_settings(second)
        line = second.inner_text("#sync-loop")
        assert line.startswith("Another panel (or the background sync) is syncing"), line

        first.close()  # its lock goes with it: the second takes over
        wait_query(second, "sync.status", {}, _syncing)
        to_list(second)
        tid = _write_thread(server, database, "To the second panel")
        second.wait_for_selector(
            f"#thread-list [data-thread-id='{tid}']", timeout=SERVER_TIMEOUT_S * 1000
        )
    finally:
        if not first.is_closed():
            first.close()
        if second is not None:
            second.close()


@pytest.fixture(scope="module")
def worker_profile(panelot_launcher: Launcher) -> Iterator[tuple[ExtensionContext, Worker]]:
    """A fresh profile of its own, and the extension's service worker."""
    with panelot_launcher.launch("panelot-sw-sync-") as ext:
        yield ext, ext.context.service_workers[0]


def test_the_sync_alarm_is_registered(worker_profile: tuple[ExtensionContext, Worker]) -> None:
    _, worker = worker_profile
    alarm = None
    for _ in range(100):  # onInstalled may still be creating it
        alarm = worker.evaluate("() => chrome.alarms.get('panelot.sync')")
        if alarm:
            break
        time.sleep(0.1)
    assert alarm is not None, "no panelot.sync alarm"
    assert alarm["periodInMinutes"] == 5
    assert alarm["scheduledTime"] > time.time() * 1000


def test_the_worker_syncs_with_no_panel_open_and_not_under_a_panel(
    worker_profile: tuple[ExtensionContext, Worker], couch_servers: dict[str, str]
) -> None:
    ext, worker = worker_profile
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)

    # Not configured: nothing loaded, and no sync state database made by asking.
    assert worker.evaluate(RUN_SYNC) == {"ran": False, "reason": "not configured"}
    assert "panelot_sync_v1" not in worker.evaluate(DATABASES)

    # Configured in a panel (a command: no loop starts), a thread made, the panel closed.
    panel = open_panel(ext.context, ext.extension_id)
    _send(panel, "sync.configure", {"server": server, "database": database})
    mine = new_thread(panel)
    assert query(panel, "sync.status", {})["running"] is False
    panel.close()
    _wait_held(worker, held=False)
    theirs = _write_thread(server, database, "Pulled by the worker")
    assert worker.evaluate(READ_THREAD, theirs) is None

    result = worker.evaluate(RUN_SYNC)
    assert result["ran"] is True and result["ok"] is True, result
    assert result["pull"]["written"] >= 2 and result["pull"]["refused"] == [], result
    assert result["push"]["pushed"] >= 1, result
    pulled = worker.evaluate(READ_THREAD, theirs)
    assert pulled is not None and pulled["title"] == "Pulled by the worker", pulled
    doc = _wait_on_server(server, database, f"threads:{mine}")  # there already: no wait
    assert doc["record"]["id"] == mine, doc

    # A panel opened now starts its loop and holds the lock: the worker does not sync.
    panel = open_panel(ext.context, ext.extension_id)
    try:
        wait_query(panel, "sync.status", {}, _syncing)
        _wait_held(worker, held=True)
        assert worker.evaluate(RUN_SYNC) == {"ran": False, "reason": "a panel is syncing"}
    finally:
        panel.close()
    # Closed: the lock is free again, and the worker syncs.
    _wait_held(worker, held=False)
    again = worker.evaluate(RUN_SYNC)
    assert again["ran"] is True and again["ok"] is True, again
