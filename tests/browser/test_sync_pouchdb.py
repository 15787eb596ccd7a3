"""Two implementations of CouchDB's replication protocol agree, in real Chromium.

The store in the harness page pushes (``sync.push``, through the page's ``fetch``) to
the test server (express-pouchdb, tests/support/couch_server.cjs); then **PouchDB
itself** (``dist/web/vendor/pouchdb.min.js``, npm's ``pouchdb`` 9.0.0) in the same
page replicates that server database into its own IndexedDB database and must see
every pushed record, as mapped, and the attachment's bytes with the same digest. After
a change and a second push, a second PouchDB replication brings exactly the new
revision, whose attachment is still the one pushed once.

And through the page's ``fetch`` with Basic auth: pushes leave no proxy behind, and the
password is in no IndexedDB database of the origin, in clear or encoded, nor in the
error of a refused one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import urllib.request
import uuid
from typing import Any

from playwright.sync_api import Page

from behavior.sync import AUTH_ENV, AUTH_PASSWORD, AUTH_USER, OPEN_ENV
from browser_harness import run_py
from leak_scan import DUMP_IDB, secret_forms

DATA = bytes(range(256)) * 40  # every byte value, 10 KiB

PUSH = """
import base64, json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
from panelot.sync.mapping import local_view

store = await PanelotStore.open(BrowserFactory(), browser_host(), name={name!r}, search=False)
try:
    await store.command("sync.configure", {{"server": {server!r}, "database": {database!r}}})
    tid = await store.create_thread("Two implementations", tags=["proof"])
    user = await store.append(tid, "user_message", {{"content": [{{"type": "text", "text": "hi ✓"}}]}})
    reply = await store.append(
        tid, "assistant_message", {{"content": [{{"type": "text", "text": "hello"}}], "model": "m", "connectionId": "c"}}
    )
    put = await store.command("attachment.put", {{
        "threadId": tid, "kind": "file", "mime": "application/octet-stream",
        "dataBase64": {data!r},
    }})
    await store.command("memory.write", {{"key": "lang", "value": "pt"}})
    first = await store.command("sync.push", {{}})
    records = {{}}  # as pushed
    for table in ("threads", "nodes", "attachments", "memories"):
        for row in await store.db.table(table).to_collection().to_list():
            records[f"{{table}}:{{row['id']}}"] = local_view(table, row)
    await store.command("thread.update", {{"threadId": tid, "patch": {{"title": "Renamed", "pinned": True}}}})
    await store.db.table("attachments").update(put["attachmentId"], {{"meta": {{"note": "2"}}}})
    result = {{"first": first, "tid": tid, "aid": put["attachmentId"], "records": records}}
finally:
    store.close()
json.dumps(result)
"""

SECOND_PUSH = """
import json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore

store = await PanelotStore.open(BrowserFactory(), browser_host(), name={name!r}, search=False)
try:
    report = await store.command("sync.push", {{}})
finally:
    store.close()
json.dumps(report)
"""

CLEANUP = """
import json
from panelot.idb.browser import BrowserFactory
from panelot.sync.state import state_name
for n in ({name!r}, state_name({name!r})):
    await BrowserFactory().delete(n)
json.dumps(True)
"""

REPLICATE = """async ([remote, local]) => {
  if (!window.PouchDB) {
    await new Promise((ok, fail) => {
      const script = document.createElement("script");
      script.src = "/vendor/pouchdb.min.js";
      script.onload = ok;
      script.onerror = () => fail(new Error("pouchdb.min.js did not load"));
      document.head.append(script);
    });
  }
  const db = new PouchDB(local);
  const info = await PouchDB.replicate(remote, db);
  const all = await db.allDocs({ include_docs: true, attachments: true, binary: false });
  const docs = {};
  for (const row of all.rows) docs[row.id] = row.doc;
  const blobs = {};
  for (const row of all.rows) {
    if (row.doc._attachments?.bytes) {
      const blob = await db.getAttachment(row.id, "bytes");
      const bytes = new Uint8Array(await blob.arrayBuffer());
      let text = "";
      for (const b of bytes) text += String.fromCharCode(b);
      blobs[row.id] = btoa(text);
    }
  }
  return { ok: info.ok, written: info.docs_written, docs, blobs };
}"""

DESTROY = "async (local) => { if (!window.PouchDB) return false; await new PouchDB(local).destroy(); return true; }"


def _md5_digest(data: bytes) -> str:
    return "md5-" + base64.b64encode(hashlib.md5(data).digest()).decode()


def _create_database(server: str) -> str:
    database = f"pouch-{uuid.uuid4().hex[:12]}"
    request = urllib.request.Request(f"{server}/{database}", method="PUT")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status in (201, 202)
    return database


def _by_table(docs: dict[str, Any]) -> dict[str, Any]:
    """The records' documents (``_design`` and other ``_`` documents left out)."""
    return {k: v for k, v in docs.items() if not k.startswith("_")}


def test_pouchdb_replicates_what_the_store_pushed(
    harness_page: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _create_database(server)
    name = f"t-sync-{uuid.uuid4().hex[:8]}"
    local = f"pouch-local-{uuid.uuid4().hex[:8]}"
    data64 = base64.b64encode(DATA).decode()
    try:
        pushed = run_py(
            harness_page,
            PUSH.format(name=name, server=server, database=database, data=data64),
        )
        records = pushed["records"]
        aid, tid = pushed["aid"], pushed["tid"]
        assert pushed["first"]["pushed"] == len(records) == 5, pushed["first"]

        seen = harness_page.evaluate(REPLICATE, [f"{server}/{database}", local])
        docs = _by_table(seen["docs"])
        assert seen["ok"] and seen["written"] == len(records), seen["written"]
        assert set(docs) == set(records), sorted(docs)
        for doc_id, doc in docs.items():
            assert doc["record"] == records[doc_id], doc_id  # every record, as mapped
            assert doc["table"] == doc_id.split(":", 1)[0] and doc["v"] == 1
            assert doc["_rev"].startswith("1-")
        assert docs[f"threads:{tid}"]["record"]["title"] == "Two implementations"
        attachment = docs[f"attachments:{aid}"]
        assert attachment["_attachments"]["bytes"]["digest"] == _md5_digest(DATA)
        assert attachment["_attachments"]["bytes"]["content_type"] == "application/octet-stream"
        assert base64.b64decode(seen["blobs"][f"attachments:{aid}"]) == DATA  # PouchDB's copy

        second = run_py(harness_page, SECOND_PUSH.format(name=name))
        assert second["pushed"] == 2 and second["unchanged"] == len(records) - 2, second
        again = harness_page.evaluate(REPLICATE, [f"{server}/{database}", local])
        assert again["written"] == 2, again["written"]  # only the two new revisions
        thread = again["docs"][f"threads:{tid}"]
        assert thread["_rev"].startswith("2-") and thread["record"]["title"] == "Renamed"
        assert thread["record"]["pinned"] is True
        attachment = again["docs"][f"attachments:{aid}"]
        assert attachment["_rev"].startswith("2-") and attachment["record"]["meta"] == {"note": "2"}
        url = f"{server}/{database}/attachments:{aid}"
        with urllib.request.urlopen(url, timeout=10) as response:  # the server's own view
            on_server = json.loads(response.read())
        assert on_server["_attachments"]["bytes"]["revpos"] == 1  # the bytes went up once
        assert on_server["_attachments"]["bytes"]["digest"] == _md5_digest(DATA)
        assert base64.b64decode(again["blobs"][f"attachments:{aid}"]) == DATA
        assert json.dumps(again["docs"]).count(data64) == 1  # one attachment, one copy
    finally:
        harness_page.evaluate(DESTROY, local)
        run_py(harness_page, CLEANUP.format(name=name))


COUNT = """() => {
  const m = window.panelot.py._module;
  return { pyproxies: m.pyproxy_alloc_map.size, jsrefs: m._hiwire_num_refs() };
}"""

AUTH_PUSHES = """
import gc, json
from panelot.errors import NetworkError
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore

store = await PanelotStore.open(BrowserFactory(), browser_host(), name={name!r}, search=False)
reports, refused = [], None
try:
    args = {{"server": {server!r}, "database": {database!r}, "user": {user!r}}}
    await store.command("sync.configure", {{**args, "password": {password!r}}})
    tid = await store.create_thread("secrets stay home")
    for i in range(20):
        await store.append(tid, "user_message", {{"content": [{{"type": "text", "text": str(i)}}]}})
        reports.append(await store.command("sync.push", {{}}))
    await store.command("sync.configure", {{**args, "password": {wrong!r}}})
    try:
        await store.command("sync.push", {{}})
    except NetworkError as exc:
        refused = exc.to_json()
finally:
    store.close()
gc.collect()
json.dumps({{"reports": reports, "refused": refused}})
"""


def test_pushes_leak_no_proxies_and_store_no_password(
    harness_page: Page, couch_servers: dict[str, str]
) -> None:
    """Through the page's fetch, with Basic auth: 20 pushes and a refused one."""
    server = couch_servers[AUTH_ENV]
    token = base64.b64encode(f"{AUTH_USER}:{AUTH_PASSWORD}".encode()).decode()
    request = urllib.request.Request(
        f"{server}/auth-{uuid.uuid4().hex[:12]}",
        method="PUT",
        headers={"Authorization": f"Basic {token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status in (201, 202)
    database = request.full_url.rsplit("/", 1)[1]
    name = f"t-sync-{uuid.uuid4().hex[:8]}"
    wrong = "Wrong-pässword-5e1d"
    harness_page.evaluate("() => window.panelot.py._module.enable_pyproxy_allocation_tracing()")
    try:
        run_py(harness_page, "import gc, json\ngc.collect()\njson.dumps(0)")
        before = harness_page.evaluate(COUNT)
        code = AUTH_PUSHES.format(
            name=name,
            server=server,
            database=database,
            user=AUTH_USER,
            password=AUTH_PASSWORD,
            wrong=wrong,
        )
        out = run_py(harness_page, code)
        after = harness_page.evaluate(COUNT)
        assert [r["pushed"] for r in out["reports"]] == [2] * 20, out["reports"]  # thread, node
        assert after["pyproxies"] == before["pyproxies"], (before, after)
        assert after["jsrefs"] <= before["jsrefs"] + 5, (before, after)
        refused = out["refused"]
        assert refused["name"] == "NetworkError" and "401" in refused["message"], refused
        stored = json.dumps(harness_page.evaluate(DUMP_IDB), ensure_ascii=False)
        assert "secrets stay home" in stored  # the dump sees the store's databases
        for secret in (AUTH_PASSWORD, wrong):
            for form in secret_forms(secret):
                assert form not in stored, form
                assert form not in json.dumps(refused, ensure_ascii=False), form
    finally:
        harness_page.evaluate(
            "() => window.panelot.py._module.disable_pyproxy_allocation_tracing()"
        )
        run_py(harness_page, CLEANUP.format(name=name))
