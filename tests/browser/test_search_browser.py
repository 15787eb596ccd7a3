"""Search kept true across contexts, in real Chromium.

Dexie code in a second page of the origin writes ``panelot_v1`` directly; the store's
indexer in the harness page hears it on Dexie's BroadcastChannel, indexes it, and an
open live ``search.messages`` updates: when the node arrives, and when Dexie deletes
it. Every step waits for the state that proves it landed.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page

from browser_harness import run_py
from panelot.schema import PANELOT_V1_STORES

WAIT_S = 10

PRELUDE = f"""
import json
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
from behavior.waiting import until
SEARCH = globals().setdefault("SEARCH", {{}})
WAIT_S = {WAIT_S}

async def s_open(name):
    if name not in SEARCH:
        store = await PanelotStore.open(BrowserFactory(), name=name)
        SEARCH[name] = {{"store": store, "results": [], "live": None}}
    return SEARCH[name]

def s_last(name):
    results = SEARCH[name]["results"]
    return results[-1] if results else None
"""

DEXIE = """async ([op, name, stores, arg]) => {
  const { Dexie } = await import("/vendor/dexie.mjs");
  const all = (globalThis.__searchDexie ??= {});
  if (op === "close") {
    all[name]?.close();
    delete all[name];
    return true;
  }
  let db = all[name];
  if (!db) {
    db = all[name] = new Dexie(name);
    db.version(1).stores(stores);
    await db.open();
  }
  if (op === "put") await db.nodes.put(arg);
  if (op === "delete") await db.nodes.delete(arg);
  return true;
}"""

DELETE_DB = """(name) => new Promise((ok) => {
  const r = indexedDB.deleteDatabase(name);
  r.onsuccess = () => ok("deleted");
  r.onerror = () => ok(`error: ${r.error}`);
  setTimeout(() => ok("timed out (a connection is still open)"), 5000);
})"""


def py(page: Page, code: str) -> Any:
    """Run ``code`` after the prelude in the harness page's Pyodide; return its JSON value."""
    return run_py(page, PRELUDE + code)


def dexie(page: Page, op: str, name: str, arg: Any = None) -> Any:
    """Run one Dexie operation on database ``name`` in ``page``."""
    return page.evaluate(DEXIE, [op, name, PANELOT_V1_STORES, arg])


@pytest.fixture()
def db_name(behavior_page: Page) -> Iterator[str]:
    """A fresh store name; afterwards the store is closed and both databases deleted."""
    name = f"search-{uuid.uuid4().hex[:10]}"
    yield name
    py(
        behavior_page,
        f"st = SEARCH.pop({name!r}, None)\n"
        "if st is not None:\n"
        "    st['live'] and st['live'].close()\n"
        "    st['store'].close()\n"
        "json.dumps(True)",
    )
    for db in (name, f"{name}-search"):
        assert behavior_page.evaluate(DELETE_DB, db) == "deleted"


@pytest.fixture()
def other_page(behavior_page: Page, web_server: str, db_name: str) -> Iterator[Page]:
    """A blank page of the harness page's origin (no Pyodide): Dexie code runs there."""
    page = behavior_page.context.new_page()
    url = f"{web_server}search-blank.html"
    page.route(url, lambda route: route.fulfill(content_type="text/html", body="<!doctype html>"))
    page.goto(url)
    yield page
    dexie(page, "close", db_name)
    page.close()


def test_a_node_dexie_writes_in_another_page_is_found_and_a_live_search_follows(
    behavior_page: Page, other_page: Page, db_name: str
) -> None:
    tid = py(
        behavior_page,
        f"""
st = await s_open({db_name!r})
store = st["store"]
tid = await store.create_thread("Fruit")
st["live"] = store.live("search.messages", {{"text": "kumquat"}}, on_result=st["results"].append)
await until(lambda: s_last({db_name!r}) is not None, WAIT_S, "the first result")
assert s_last({db_name!r})["total"] == 0
json.dumps(tid)
""",
    )
    record = {
        "id": "dexie-1",
        "threadId": tid,
        "parentId": None,
        "seq": 7,
        "ts": 1_700_000_000_000,
        "type": "user_message",
        "payload": {"content": [{"type": "text", "text": "a kumquat from Dexie"}]},
    }
    dexie(other_page, "put", db_name, record)
    found = py(
        behavior_page,
        f"""
await until(lambda: s_last({db_name!r})["total"] == 1, WAIT_S, "the live search to find it")
found = await SEARCH[{db_name!r}]["store"].query("search.messages", {{"text": "kumquat"}})
json.dumps(found)
""",
    )
    assert [h["nodeId"] for h in found["hits"]] == ["dexie-1"]
    assert found["hits"][0]["highlights"], found
    dexie(other_page, "delete", db_name, "dexie-1")
    py(
        behavior_page,
        f"""
await until(lambda: s_last({db_name!r})["total"] == 0, WAIT_S, "the live search to drop it")
found = await SEARCH[{db_name!r}]["store"].query("search.messages", {{"text": "kumquat"}})
assert found == {{"hits": [], "total": 0}}, found
json.dumps(True)
""",
    )
    assert json.loads(json.dumps(found))  # the hit was real, and now it is gone
