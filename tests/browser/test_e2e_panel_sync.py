"""End-to-end tests of Settings → Sync, in the real extension against the test servers.

The servers are tests/support/couch_server.cjs (express-pouchdb in memory on 127.0.0.1,
one open, one with Basic auth), started by the ``couch_servers`` fixture. What a test
asserts as on the server it reads with plain HTTP from Python; what is stored in the
profile, with ``panelot.query`` and the profile's own storage.

* Test connection with the right password says the connection works; with a wrong one,
  "Wrong user or password"; and the password is never in the DOM after saving, nor in
  ``chrome.storage.local`` or any IndexedDB database of the extension in clear or encoded.
* Sync now pushes the open thread (its document is on the server) and the status line
  says when it synced.
* Stop syncing forgets the configuration and its stored password; the server keeps
  what it had.
* Syncing with the right password and a wrong one, from the panel and from the service
  worker, leaves the password in no console message or page error (the panel's, the
  worker's), no worker result and no backup file.
* A document the pull refuses is named on the status line by its id, as text: a
  hostile id with markup stays inert.
* After a backup restore the status says sync is paused, Sync now is refused in plain
  words, and the two answers work: "Replace the server's data" deletes there the thread
  the backup lacks; "Keep the server's changes too" brings it back and deletes nothing.

Measured here (docs/sync.md, "The panel"): in this Chromium under Playwright,
``chrome.permissions.request`` from the click opens Chrome's prompt, which nobody
answers (its promise stays pending), and the side panel fetches the loopback test
server without the host permission, because the server answers with CORS headers.
The panel therefore asks in the click and does not wait for the answer.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any

from playwright.sync_api import ConsoleMessage, Error, Page

from behavior.sync import AUTH_ENV, AUTH_PASSWORD, AUTH_USER, OPEN_ENV
from browser_harness import query
from e2e_support import confirm, to_sync_settings, wait_query
from leak_scan import DUMP_IDB, secret_forms
from panelot.testing import new_thread

WRONG = "wrong-Pässword-e2e-4b7a"
#: What the ``panelot.sync`` alarm runs in the service worker.
RUN_SYNC = "() => self.panelotRunSync()"


def _http(method: str, url: str, *, auth: bool = False, body: Any = None) -> tuple[int, Any]:
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if auth:
        token = base64.b64encode(f"{AUTH_USER}:{AUTH_PASSWORD}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, method=method, headers=headers)  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _new_database(server: str, *, auth: bool = False) -> str:
    name = f"panelot-e2e-{uuid.uuid4().hex[:10]}"
    status, answer = _http("PUT", f"{server}/{name}", auth=auth)
    assert status in (201, 202), (status, answer)
    return name


def _press(page: Page, button: str, count: int) -> int:
    """Click ``button`` and wait until *this* press has finished; the new count."""
    page.click(button)
    page.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
    return count + 1


def _fill(page: Page, server: str, database: str, user: str = "", password: str = "") -> None:
    page.fill("#sync-server", server)
    page.fill("#sync-database", database)
    page.fill("#sync-user", user)
    page.fill("#sync-password", password)


def _assert_nowhere(page: Page, secret: str) -> None:
    """``secret`` is in no DOM, chrome.storage.local or IndexedDB value, in any form."""
    dom = page.content() + json.dumps(
        page.evaluate("() => [...document.querySelectorAll('input')].map((i) => i.value)")
    )
    stored = json.dumps(page.evaluate("() => chrome.storage.local.get(null)"), ensure_ascii=False)
    idb = json.dumps(page.evaluate(DUMP_IDB), ensure_ascii=False)
    for form in secret_forms(secret):
        assert form not in dom, f"{form!r} in the DOM"
        assert form not in stored, f"{form!r} in chrome.storage.local"
        assert form not in idb, f"{form!r} in IndexedDB"


def test_test_connection_says_it_works_and_names_a_wrong_password(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[AUTH_ENV]
    database = _new_database(server, auth=True)
    count = to_sync_settings(panel)
    assert panel.inner_text("#sync-status").startswith("Not set up"), panel.inner_text(
        "#sync-status"
    )
    _fill(panel, server, database, AUTH_USER, AUTH_PASSWORD)
    count = _press(panel, "#sync-test", count)
    shown = panel.inner_text("#sync-status")
    assert f"Connection works: the database {database} answered (0 documents" in shown, shown
    assert panel.query_selector("#sync-error") is None
    assert panel.input_value("#sync-password") == ""
    assert "stored" in (panel.get_attribute("#sync-password", "placeholder") or "")
    status = query(panel, "sync.status", {})
    assert status["configured"] and status["user"] == AUTH_USER and status["database"] == database
    assert status["lastPush"] is None  # a test writes nothing
    _, docs = _http("GET", f"{server}/{database}/_all_docs", auth=True)
    assert docs["rows"] == [], docs
    _assert_nowhere(panel, AUTH_PASSWORD)

    # A wrong password, typed and tested: saved, refused by the server, said plainly.
    panel.fill("#sync-password", WRONG)
    count = _press(panel, "#sync-test", count)
    error = panel.inner_text("#sync-error")
    assert error.startswith("Connection failed: Wrong user or password"), error
    assert 'class="status error"' in panel.eval_on_selector("#sync-status", "e => e.outerHTML")
    _assert_nowhere(panel, WRONG)
    _assert_nowhere(panel, AUTH_PASSWORD)

    # The right one again: works, and the error is gone.
    panel.fill("#sync-password", AUTH_PASSWORD)
    count = _press(panel, "#sync-test", count)
    assert "Connection works" in panel.inner_text("#sync-status")
    assert panel.query_selector("#sync-error") is None
    _assert_nowhere(panel, AUTH_PASSWORD)


def test_sync_now_pushes_the_thread_and_says_when(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)
    thread_id = new_thread(panel)
    count = to_sync_settings(panel)
    _fill(panel, server, database)
    count = _press(panel, "#sync-now", count)
    shown = panel.inner_text("#sync-status")
    assert panel.query_selector("#sync-error") is None, shown
    assert "Synced: " in shown and "Last synced " in shown, shown
    status, doc = _http("GET", f"{server}/{database}/threads:{thread_id}")
    assert status == 200 and doc["record"]["id"] == thread_id, (status, doc)
    stored = query(panel, "sync.status", {})
    assert stored["lastPush"]["at"] > 0 and stored["database"] == database, stored
    assert panel.inner_text("#sync-last") == f"Last synced {_local_time(panel, stored)}."


def _local_time(page: Page, status: dict[str, Any]) -> str:
    last = max(status["lastPush"]["at"], (status["lastPull"] or {}).get("at", 0))
    return str(page.evaluate("(ms) => new Date(ms).toLocaleString()", last))


def test_stop_syncing_forgets_the_configuration_and_its_password(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[AUTH_ENV]
    database = _new_database(server, auth=True)
    thread_id = new_thread(panel)
    count = to_sync_settings(panel)
    _fill(panel, server, database, AUTH_USER, AUTH_PASSWORD)
    count = _press(panel, "#sync-now", count)
    assert panel.query_selector("#sync-error") is None, panel.inner_text("#sync-status")
    refs = query(panel, "credential.list", {})
    panel.click("#sync-stop")
    confirm(panel)
    panel.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
    wait_query(panel, "sync.status", {}, lambda s: s["configured"] is False)
    panel.wait_for_selector("#sync-status .status-part")
    assert panel.inner_text("#sync-status").startswith("Not set up")
    assert panel.input_value("#sync-server") == "" and panel.input_value("#sync-user") == ""
    assert panel.is_disabled("#sync-stop")
    after = query(panel, "credential.list", {})
    assert len(after) == len(refs) - 1, (refs, after)
    _assert_nowhere(panel, AUTH_PASSWORD)
    # The server keeps what it had.
    status, _ = _http("GET", f"{server}/{database}/threads:{thread_id}", auth=True)
    assert status == 200


#: The profile's backup (settings included), as the text of its file.
BACKUP_TEXT = """async () => {
  const { file } = await window.panelot.backup.export({ settings: true });
  return await file.text();
}"""


def test_the_password_is_in_no_log_no_worker_result_and_no_backup(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    context = panel.context
    logs: list[str] = []

    def log(message: ConsoleMessage) -> None:
        logs.append(message.text)

    def page_error(error: Error) -> None:
        logs.append(f"pageerror: {error}")

    context.on("console", log)  # the panel and the service worker alike
    panel.on("pageerror", page_error)
    try:
        server = couch_servers[AUTH_ENV]
        database = _new_database(server, auth=True)
        thread_id = new_thread(panel)
        count = to_sync_settings(panel)
        _fill(panel, server, database, AUTH_USER, AUTH_PASSWORD)
        count = _press(panel, "#sync-now", count)  # Sync now starts no loop: no lock held
        assert panel.query_selector("#sync-error") is None, panel.inner_text("#sync-status")
        worker = context.service_workers[0]
        synced = worker.evaluate(RUN_SYNC)
        assert synced["ran"] is True and synced["ok"] is True, synced
        # A wrong password, from the panel and then from the worker: both refused.
        panel.fill("#sync-password", WRONG)
        count = _press(panel, "#sync-now", count)
        assert "Wrong user or password" in panel.inner_text("#sync-error")
        refused = worker.evaluate(RUN_SYNC)
        assert refused["ran"] is True and refused["ok"] is False, refused
        backup = str(panel.evaluate(BACKUP_TEXT))
    finally:
        context.remove_listener("console", log)
        panel.remove_listener("pageerror", page_error)
    assert thread_id in backup and '"panelotSettings"' in backup  # the file is whole
    said = json.dumps([synced, refused], ensure_ascii=False) + "\n".join(logs)
    for secret in (AUTH_PASSWORD, WRONG):
        for form in secret_forms(secret):
            assert form not in said, f"{form!r} in a log or the worker's result"
            assert form not in backup, f"{form!r} in the backup"
    # The wrong password stays saved: put the right one back for the tests after.
    panel.fill("#sync-password", AUTH_PASSWORD)
    _press(panel, "#sync-test", count)
    assert panel.query_selector("#sync-error") is None, panel.inner_text("#sync-status")


def test_a_refused_document_is_named_as_text(panel: Page, couch_servers: dict[str, str]) -> None:
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)
    hostile = 'memories:<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
    doc = {"table": "memories", "v": 1, "record": {"id": hostile.split(":", 1)[1]}}  # no clock
    status, answer = _http(
        "PUT", f"{server}/{database}/{urllib.parse.quote(hostile, safe='')}", body=doc
    )
    assert status in (201, 202), (status, answer)
    count = to_sync_settings(panel)
    _fill(panel, server, database)
    count = _press(panel, "#sync-now", count)
    refused = panel.inner_text("#sync-refused")
    assert refused.startswith("1 document(s) from the server were refused and not written: "), (
        refused
    )
    assert hostile in refused, refused
    assert panel.query_selector("#sync-status img, #sync-status script") is None
    assert panel.evaluate("() => window.__pwned") is None
    pulled = query(panel, "sync.status", {})["lastPull"]["refused"]
    assert [r["id"] for r in pulled] == [hostile], pulled


APPEND = """async (threadId) => {
  const out = await window.panelot.send({ type: "message.append", clientId: "e2e",
    submissionId: crypto.randomUUID(), payload: { threadId, type: "user_message",
      payload: { content: [{ type: "text", text: "not an empty chat" }] } } });
  if (out.status !== "completed") throw new Error(JSON.stringify(out.error));
}"""


def _restored_after_sync(panel: Page, server: str, database: str) -> tuple[str, str, int]:
    """Sync a thread, back up, sync a second one, restore: ``(kept, dropped, count)``."""
    kept = new_thread(panel)
    panel.evaluate(APPEND, kept)  # not empty: + opens a new conversation next
    count = to_sync_settings(panel)
    _fill(panel, server, database)
    count = _press(panel, "#sync-now", count)
    assert panel.query_selector("#sync-error") is None, panel.inner_text("#sync-status")
    panel.evaluate("async () => { window.__file = (await window.panelot.backup.export()).file; }")
    dropped = new_thread(panel)
    assert dropped != kept
    count = to_sync_settings(panel)
    count = _press(panel, "#sync-now", count)
    status, _ = _http("GET", f"{server}/{database}/threads:{dropped}")
    assert status == 200, status
    assert query(panel, "sync.status", {})["paused"] is None
    envelope = panel.evaluate(
        "async () => window.panelot.backup.restore(window.__file, {settings: false})"
    )
    assert envelope["status"] == "completed", envelope
    count = to_sync_settings(panel)
    panel.wait_for_selector("#sync-paused-note")
    panel.wait_for_selector("#sync-paused", state="visible")
    shown = panel.inner_text("#sync-status")
    assert "Sync is paused: a backup was restored here." in shown, shown
    count = _press(panel, "#sync-now", count)  # refused while paused, in plain words
    assert "Sync is paused since a backup was restored" in panel.inner_text("#sync-error")
    return kept, dropped, count


def test_after_a_restore_replace_the_servers_data_deletes_what_the_backup_lacks(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)
    kept, dropped, count = _restored_after_sync(panel, server, database)
    panel.click("#sync-resume-replace")
    confirm(panel)
    panel.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
    assert panel.query_selector("#sync-error") is None, panel.inner_text("#sync-status")
    assert "the server now has the restored data" in panel.inner_text("#sync-note")
    panel.wait_for_selector("#sync-paused", state="hidden")
    assert query(panel, "sync.status", {})["paused"] is None
    status, _ = _http("GET", f"{server}/{database}/threads:{dropped}")
    assert status == 404, status  # deleted on the server
    status, doc = _http("GET", f"{server}/{database}/threads:{kept}")
    assert status == 200 and doc["record"]["id"] == kept, (status, doc)


def test_after_a_restore_keep_the_servers_changes_brings_them_back(
    panel: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _new_database(server)
    kept, dropped, count = _restored_after_sync(panel, server, database)
    panel.click("#sync-resume-merge")
    panel.wait_for_selector(f"#sync-status[data-action-count='{count + 1}']")
    assert panel.query_selector("#sync-error") is None, panel.inner_text("#sync-status")
    panel.wait_for_selector("#sync-paused", state="hidden")
    count = _press(panel, "#sync-now", count + 1)
    assert panel.query_selector("#sync-error") is None, panel.inner_text("#sync-status")
    listed = query(panel, "thread.list", {})
    assert dropped in repr(listed) and kept in repr(listed), listed  # the server's came back
    status, doc = _http("GET", f"{server}/{database}/threads:{dropped}")
    assert status == 200 and not doc.get("_deleted"), (status, doc)  # nothing deleted there
