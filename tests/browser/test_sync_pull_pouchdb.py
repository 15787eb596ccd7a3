"""What PouchDB writes, the store pulls: two implementations of the protocol, in real Chromium.

**PouchDB itself** (``dist/web/vendor/pouchdb.min.js``) in the harness page writes a
thread with its nodes, in the mapping's shape (docs/sync.md "The mapping"), into its own
IndexedDB database and replicates it to the test server (express-pouchdb). The store in
the same page, with a live ``thread.list`` open, runs ``sync.pull`` through the page's
``fetch``: the live list then shows the thread (the pull committed through the normal
write path, so the change feed woke the query), and the nodes are as PouchDB wrote them.
"""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

from playwright.sync_api import Page

from behavior.sync import OPEN_ENV
from browser_harness import run_py

T0 = 1_764_000_000_000
CLOCK = f"{T0:013d}-0000-pouchdb"

WRITE_AND_REPLICATE = """async ([remote, local, docs]) => {
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
  const put = await db.bulkDocs(docs);
  const info = await PouchDB.replicate(db, remote);
  return { put: put.map((r) => !!r.ok), ok: info.ok, written: info.docs_written };
}"""

DESTROY = "async (local) => { if (!window.PouchDB) return false; await new PouchDB(local).destroy(); return true; }"

PULL_LIVE = """
import asyncio, json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore

store = await PanelotStore.open(BrowserFactory(), browser_host(), name={name!r}, search=False)
results = []
live = None
try:
    await store.command("sync.configure", {{"server": {server!r}, "database": {database!r}}})
    live = store.live("thread.list", {{}}, on_result=results.append)
    for _ in range(1000):  # the first result: the empty list
        if results:
            break
        await asyncio.sleep(0.01)
    first = results[-1]
    report = await store.command("sync.pull", {{}})
    for _ in range(1000):  # the live list shows what the pull wrote
        if {tid!r} in json.dumps(results[-1]):
            break
        await asyncio.sleep(0.01)
    nodes = await store.db.table("nodes").where("threadId").equals({tid!r}).to_list()
    thread = await store.db.table("threads").get({tid!r})
    out = {{"first": first, "last": results[-1], "report": report, "nodes": nodes, "thread": thread}}
finally:
    if live is not None:
        live.close()
    store.close()
json.dumps(out)
"""

CLEANUP = """
import json
from panelot.idb.browser import BrowserFactory
from panelot.sync.state import state_name
for n in ({name!r}, state_name({name!r})):
    await BrowserFactory().delete(n)
json.dumps(True)
"""


def _create_database(server: str) -> str:
    database = f"pouch-{uuid.uuid4().hex[:12]}"
    request = urllib.request.Request(f"{server}/{database}", method="PUT")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status in (201, 202)
    return database


def _docs(tid: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A thread and its two nodes as PouchDB writes them (the mapping's documents)."""
    user = {
        "id": "n-pouch-user",
        "threadId": tid,
        "parentId": None,
        "seq": 1,
        "ts": T0 + 1,
        "type": "user_message",
        "payload": {"content": [{"type": "text", "text": "written by PouchDB ✓"}]},
    }
    reply = {
        "id": "n-pouch-reply",
        "threadId": tid,
        "parentId": user["id"],
        "seq": 2,
        "ts": T0 + 2,
        "type": "assistant_message",
        "payload": {
            "content": [{"type": "text", "text": "pulled by the store"}],
            "model": "m",
            "connectionId": "c",
        },
    }
    thread = {
        "id": tid,
        "title": "From PouchDB",
        "createdAt": T0,
        "updatedAt": T0 + 2,
        "leafId": reply["id"],
        "tags": ["pouch"],
        "pinned": False,
        "archived": False,
        "folderId": None,
        "preset": None,
        "scopeOrigins": [],
    }
    clocks = {name: CLOCK for name in ("title", "pinned", "archived", "folderId", "tags")}
    clocks.update(preset=CLOCK, leafId=CLOCK)
    docs = [
        {"_id": f"threads:{tid}", "table": "threads", "v": 1, "record": thread, "clocks": clocks}
    ]
    docs += [
        {"_id": f"nodes:{n['id']}", "table": "nodes", "v": 1, "record": n} for n in (user, reply)
    ]
    return docs, [user, reply]


def test_the_store_pulls_what_pouchdb_wrote_and_its_live_list_shows_it(
    harness_page: Page, couch_servers: dict[str, str]
) -> None:
    server = couch_servers[OPEN_ENV]
    database = _create_database(server)
    name = f"t-pull-{uuid.uuid4().hex[:8]}"
    local = f"pouch-src-{uuid.uuid4().hex[:8]}"
    tid = f"t-pouch-{uuid.uuid4().hex[:8]}"
    docs, nodes = _docs(tid)
    try:
        wrote = harness_page.evaluate(WRITE_AND_REPLICATE, [f"{server}/{database}", local, docs])
        assert wrote["ok"] and wrote["put"] == [True] * 3 and wrote["written"] == 3, wrote
        out = run_py(
            harness_page,
            PULL_LIVE.format(name=name, server=server, database=database, tid=tid),
        )
        assert tid not in json.dumps(out["first"]), out["first"]  # not there before the pull
        report = out["report"]
        assert report["pulled"] == 3 and report["written"] == 3, report
        assert report["refused"] == [], report
        assert tid in json.dumps(out["last"]), out["last"]  # the live list followed
        assert "From PouchDB" in json.dumps(out["last"], ensure_ascii=False)
        by_id = {n["id"]: n for n in out["nodes"]}
        assert by_id == {n["id"]: n for n in nodes}, by_id  # as PouchDB wrote them
        thread = out["thread"]
        assert thread["leafId"] == "n-pouch-reply" and thread["title"] == "From PouchDB"
        assert thread["stats"]["turns"] == 1 and thread["shown"]["messages"] == 2, thread
    finally:
        harness_page.evaluate(DESTROY, local)
        run_py(harness_page, CLEANUP.format(name=name))
