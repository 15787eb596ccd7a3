"""Attachments on real IndexedDB in Chromium: a kill between eviction steps, and quota.

Each test gets a browser context of its own (its own storage and quota), on the
dist/web harness. The behavior cases (tests/behavior/attachments/) cover
the rest on both cores.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from browser_harness import run_py, wait_ready
from quota_support import MIB, own_browser  # noqa: F401 - the shared fixture


@pytest.fixture()
def own_context(own_browser: Browser) -> Iterator[BrowserContext]:  # noqa: F811
    """A fresh browser context (its own storage and quota), closed after the test.

    Off the record, as Playwright's contexts are: IndexedDB lives in memory. The
    quota test needs that: in an on-disk profile, deleting Blob records did not lower
    the origin's usage (measured: not after 6 s, nor after reopening the database),
    so a retry after eviction still failed there.
    """
    context = own_browser.new_context()
    yield context
    context.close()


def open_web_page(context: BrowserContext, base_url: str) -> Page:
    """A harness page of ``context`` with ``window.panelot`` booted."""
    page = context.new_page()
    page.goto(f"{base_url}index.html")
    wait_ready(page)
    return page


_SCENE = """
import json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
from panelot.attachments.budget import put_within_budget
from panelot.faults import FAULTS

store = await PanelotStore.open(BrowserFactory(), browser_host(), {name!r})
a, b = await store.create_thread("A"), await store.create_thread("B")
ids, nodes = {{}}, {{}}
for label, tid in (("B1", b), ("A1", a), ("B2", b), ("B3", b)):
    rec = await put_within_budget(store.db, tid, "image", "image/png", label.encode() * 500,
                                  budget=store.host.storage.budget)
    ids[label] = rec["id"]
    block = {{"type": "image", "attachmentId": rec["id"], "name": label}}
    nodes[label] = (await store.append(tid, "user_message", {{"content": [block]}}))["nodeId"]
FAULTS.arm("attachment.evict.between")
out = await store.send({{"type": "attachment.evict", "clientId": "c", "submissionId": "s",
                        "payload": {{"budget": 1000, "activeThreadId": a}}}})
FAULTS.disarm()
json.dumps({{"out": out, "ids": ids, "nodes": nodes, "b": b}})
"""

_RAW_ATTACHMENTS = """async (name) => {
  const db = await new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const rows = await new Promise((resolve, reject) => {
    const req = db.transaction("attachments").objectStore("attachments").getAll();
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  const out = [];
  for (const r of rows) {
    if (!(r.bytes instanceof Blob)) {  // a record marked deleting holds no Blob
      out.push({ id: r.id, deleting: !!r.deleting, isBlob: false, size: r.size });
      continue;
    }
    const url = URL.createObjectURL(r.bytes);  // as Dexie code would show it
    const text = await (await fetch(url)).text();
    URL.revokeObjectURL(url);
    out.push({ id: r.id, deleting: !!r.deleting, isBlob: true,
               size: r.size, blobSize: r.bytes.size, type: r.bytes.type, head: text.slice(0, 4) });
  }
  db.close();
  return out;
}"""


def test_kill_between_eviction_steps_is_finished_at_next_start(
    own_context: BrowserContext, web_server: str
) -> None:
    name = f"kill-{uuid.uuid4().hex[:8]}"
    page = open_web_page(own_context, web_server)
    scene = run_py(page, _SCENE.format(name=name))
    assert scene["out"]["status"] == "failed"
    assert scene["out"]["error"]["name"] == "InjectedFault"
    raw = page.evaluate(_RAW_ATTACHMENTS, name)
    assert sorted(r["id"] for r in raw if r["deleting"] and not r["isBlob"]) == sorted(
        scene["ids"][k] for k in ("B1", "B2", "B3")
    )
    page.close()  # the context dies between step 1 and step 2

    page = open_web_page(own_context, web_server)
    code = f"""
import json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
store = await PanelotStore.open(BrowserFactory(), browser_host(), {name!r})
nodes = await store.db.table("nodes").bulk_get({json.dumps(list(scene["nodes"].values()))})
check = await store.query("thread.check", {{"threadId": {scene["b"]!r}}})
json.dumps({{"startup": store.startup, "check": check,
             "evicted": [n["payload"]["content"][0].get("evicted", False) for n in nodes]}})
"""
    after = run_py(page, code)
    assert after["startup"]["finished"] == 3
    assert after["check"]["ok"], after["check"]
    assert after["evicted"] == [True, False, True, True]  # B1, A1 (active thread), B2, B3
    raw = page.evaluate(_RAW_ATTACHMENTS, name)
    assert raw == [
        {
            "id": scene["ids"]["A1"],
            "deleting": False,
            "isBlob": True,
            "size": 1000,
            "blobSize": 1000,
            "type": "image/png",
            "head": "A1A1",
        }
    ]


_FILL = """
import base64, json, os
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
from panelot.attachments.quota import storage_estimate
from panelot.bus.receipts import receipt_id

store = await PanelotStore.open(BrowserFactory(), browser_host(), {name!r})
active, filler = await store.create_thread("active"), await store.create_thread("filler")

def put(tid, i):
    data = base64.b64encode(os.urandom({size})).decode()
    return store.send({{"type": "attachment.put", "clientId": "c", "submissionId": f"put-{{i}}",
                       "payload": {{"threadId": tid, "kind": "screenshot", "mime": "image/png",
                                   "dataBase64": data}}}})

results = []
for i in range(40):
    results.append(await put(filler, i))
    if results[-1]["status"] == "failed":
        break
failed_at = len(results) - 1
after_failure = {{
    "usage": await store.query("attachment.usage", {{}}),
    "receipt": await store.db.table("commandReceipts").get(receipt_id("c", f"put-{{failed_at}}")),
    "receipts": await store.db.table("commandReceipts").count(),
    "check": await store.query("thread.check", {{"threadId": filler}}),
    "estimate": await storage_estimate(store.host),
}}
retry_before_eviction = await put(active, failed_at)
evicted = await store.send({{"type": "attachment.evict", "clientId": "c", "submissionId": "ev",
                            "payload": {{"budget": 0, "activeThreadId": active}}}})
after_evict = await storage_estimate(store.host)
retry = await put(active, failed_at)
json.dumps({{"results": results, "after": after_failure, "evicted": evicted,
             "afterEvict": after_evict,
             "retryBefore": retry_before_eviction, "retry": retry,
             "final": await store.query("attachment.usage", {{}}),
             "estimate": await storage_estimate(store.host)}})
"""


def test_quota_exceeded_rolls_back_then_eviction_lets_the_retry_succeed(
    own_context: BrowserContext, web_server: str
) -> None:
    page = own_context.new_page()
    page.goto(f"{web_server}wheels/manifest.json")  # the origin, before any storage use
    cdp = own_context.new_cdp_session(page)
    # Chromium applies an override only to storage not yet opened: set it before boot.
    cdp.send(
        "Storage.overrideQuotaForOrigin", {"origin": web_server.rstrip("/"), "quotaSize": 6 * MIB}
    )
    page.goto(f"{web_server}index.html")
    wait_ready(page)
    out = run_py(page, _FILL.format(name=f"quota-{uuid.uuid4().hex[:8]}", size=MIB))
    results = out["results"]
    assert results[-1]["status"] == "failed", results
    assert results[-1]["error"]["name"] == "QuotaExceededError", results[-1]
    stored = len(results) - 1
    assert stored >= 2
    after = out["after"]
    assert after["usage"]["count"] == stored  # the failed put left no record ...
    assert after["receipt"] is None  # ... and no receipt
    assert after["receipts"] == stored + 2  # the puts that landed and two thread.create
    assert after["check"]["ok"]
    assert after["estimate"]["quota"] == 6 * MIB and after["estimate"]["warn"] is True
    assert out["retryBefore"]["status"] == "failed"
    assert out["retryBefore"]["error"]["name"] == "QuotaExceededError"
    assert out["evicted"]["status"] == "completed"
    assert out["evicted"]["response"]["evicted"] == stored
    assert out["afterEvict"]["usage"] < MIB  # the space is back ...
    assert out["retry"]["status"] == "completed", out["retry"]  # ... and the retry lands
    assert out["final"] == {"total": MIB, "count": 1, "budget": 200 * MIB}
