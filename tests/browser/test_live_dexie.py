"""Live queries across the Dexie boundary, in real Chromium, with real Dexie 4.4.7.

Python (``db.live_query``) and Dexie (``Dexie.liveQuery``) watch the same IndexedDB
database and wake each other through Dexie's ``x-storagemutated-1`` protocol: the
CustomEvent on the global object in the same page, BroadcastChannel between pages.
Every case runs on a fresh database of its own (the panelot_v1 schema), deleted
afterwards, and waits for the state its own action produces (the new node id in a
result, a count reaching N). A short sleep appears only before asserting that
something did *not* happen, to give a wrongly scheduled re-run its chance.
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

#: How long a case waits for the state that proves its action landed.
WAIT_MS = 5_000
#: How long a case gives a wrong re-run to happen before asserting it did not.
QUIET_S = 0.3

T = "thread-T"
U = "thread-U"

# Python helpers, prepended to every snippet run in the harness page. The state of a
# case lives in LD[db name]: its connection, its live queries and their results.
PRELUDE = f"""
import asyncio, gc, json
from panelot.idb import Database
from panelot.idb.browser import BrowserFactory
from panelot.schema import PANELOT_VERSIONS
from behavior.waiting import until
LD = globals().setdefault("LD", {{}})
WAIT_S = {WAIT_MS / 1000}

def ld_node(node_id, thread, seq=0):
    return {{"id": node_id, "threadId": thread, "parentId": None, "seq": seq,
             "type": "user_message", "payload": {{"text": node_id}}}}

async def ld_open(name):
    if name not in LD:
        db = await Database(name, PANELOT_VERSIONS).open(BrowserFactory())
        LD[name] = {{"db": db, "lives": {{}}, "results": {{}}, "errors": []}}
    return LD[name]

def ld_thread_ids(thread, texts=False):
    async def body(tx):
        rows = await tx.table("nodes").where("threadId").equals(thread).to_list()
        return sorted(r["id"] + "=" + r["payload"]["text"] if texts else r["id"] for r in rows)
    return body

async def ld_watch(name, key, thread, texts=False):
    st = await ld_open(name)
    results = st["results"][key] = []
    st["lives"][key] = st["db"].live_query(
        ld_thread_ids(thread, texts), on_result=results.append, on_error=st["errors"].append)
    await until(lambda: results, WAIT_S, f"the first result of {{key}}")

def ld_last(name, key):
    results = LD[name]["results"][key]
    return results[-1] if results else None

async def ld_wait_result(name, key, want):
    await until(lambda: ld_last(name, key) == sorted(want), WAIT_S,
                f"{{key}} == {{sorted(want)}} (last: {{ld_last(name, key)}})")

def ld_close(name):
    st = LD.pop(name, None)
    if st is not None:
        for live in st["lives"].values():
            live.close()
        st["db"].close()
"""

# Dexie in a page (the harness page or a second one): one Dexie connection per
# database, its liveQuery watches on a thread's nodes (runs counts the querier's
# executions, emits the sorted ids of each emitted result), and its writes.
DEXIE = """async ([op, name, stores, arg]) => {
  const { Dexie } = await import("/vendor/dexie.mjs");
  const all = (globalThis.__liveDexie ??= {});
  if (op === "close") {
    const st = all[name];
    delete all[name];
    if (st) {
      for (const w of Object.values(st.watches)) w.sub.unsubscribe();
      st.db.close();
    }
    return true;
  }
  let st = all[name];
  if (!st) {
    const db = new Dexie(name);
    db.version(1).stores(stores);
    await db.open();
    st = all[name] = { db, watches: {} };
  }
  const db = st.db;
  switch (op) {
    case "watch": {
      const w = (st.watches[arg.key] = { runs: 0, emits: [], errors: [] });
      w.sub = Dexie.liveQuery(() => {
        w.runs += 1;
        return db.nodes.where("threadId").equals(arg.thread).toArray();
      }).subscribe({
        next: (rows) => w.emits.push(rows.map((r) => r.id).sort()),
        error: (e) => w.errors.push(String(e)),
      });
      return true;
    }
    case "put":
      await db.nodes.put(arg);
      return true;
    case "bulkPut":
      await db.nodes.bulkPut(arg);
      return true;
    case "delete":
      await db.nodes.delete(arg);
      return true;
    case "watches":
      return Object.fromEntries(Object.entries(st.watches).map(
        ([k, w]) => [k, { runs: w.runs, emits: w.emits, errors: w.errors }]));
  }
  throw new Error(`unknown op ${op}`);
}"""

# True once watch `key` of database `name` has emitted exactly the ids `want`.
EMITTED = """([name, key, want]) => {
  const emits = globalThis.__liveDexie?.[name]?.watches[key]?.emits;
  return emits !== undefined && emits.length > 0
    && JSON.stringify(emits[emits.length - 1]) === JSON.stringify(want);
}"""

DELETE_DB = """(name) => new Promise((ok) => {
  const r = indexedDB.deleteDatabase(name);
  r.onsuccess = () => ok("deleted");
  r.onerror = () => ok(`error: ${r.error}`);
  setTimeout(() => ok("timed out (a connection is still open)"), 5000);
})"""

# A raw listener on the real BroadcastChannel: every message, as JSON text.
RAW_LISTEN = """() => {
  globalThis.__raw = [];
  globalThis.__rawChannel = new BroadcastChannel("x-storagemutated-1");
  globalThis.__rawChannel.onmessage = (e) => globalThis.__raw.push(JSON.stringify(e.data));
  return true;
}"""


def node(node_id: str, thread: str, seq: int = 0) -> dict[str, Any]:
    """A node record of the panelot_v1 schema."""
    return {
        "id": node_id,
        "threadId": thread,
        "parentId": None,
        "seq": seq,
        "type": "user_message",
        "payload": {"text": node_id},
    }


def py(page: Page, code: str) -> Any:
    """Run ``code`` after the prelude in the harness page's Pyodide; return its JSON value."""
    return run_py(page, PRELUDE + code)


def dexie(page: Page, op: str, name: str, arg: Any = None) -> Any:
    """Run one Dexie operation (see DEXIE) on database ``name`` in ``page``."""
    return page.evaluate(DEXIE, [op, name, PANELOT_V1_STORES, arg])


def dexie_watch(page: Page, name: str, key: str, thread: str, want: list[str]) -> None:
    """Start Dexie's liveQuery on ``thread`` in ``page``; wait for its first result."""
    dexie(page, "watch", name, {"key": key, "thread": thread})
    wait_emitted(page, name, key, want)


def wait_emitted(page: Page, name: str, key: str, want: list[str]) -> None:
    """Wait until Dexie's watch ``key`` has emitted exactly ``sorted(want)``."""
    page.wait_for_function(EMITTED, arg=[name, key, sorted(want)], timeout=WAIT_MS)


def dexie_runs(page: Page, name: str, key: str) -> int:
    """How many times Dexie's watch ``key`` has run its querier."""
    return int(dexie(page, "watches", name)[key]["runs"])


def py_put(page: Page, name: str, *records: dict[str, Any]) -> None:
    """Put ``records`` from Python, in one read-write transaction; wait until it is published.

    (Publishing is deferred to a later turn; waiting for it keeps a late announcement of
    this write from landing in the next step of a case.)
    """
    py(
        page,
        f"""
st = await ld_open({name!r})
feed = st["db"].feed
published = feed.published
await st["db"].table("nodes").bulk_put(json.loads({json.dumps(json.dumps(records))}))
await until(lambda: feed.published > published, WAIT_S, "the write published")
json.dumps(True)
""",
    )


def py_watch(page: Page, name: str, key: str, thread: str) -> None:
    """Start a Python live query ``key`` on ``thread``; wait for its first result."""
    py(page, f"await ld_watch({name!r}, {key!r}, {thread!r})\njson.dumps(True)")


def py_wait_result(page: Page, name: str, key: str, want: list[str]) -> None:
    """Wait until Python live query ``key`` has delivered exactly ``sorted(want)``."""
    py(page, f"await ld_wait_result({name!r}, {key!r}, {want!r})\njson.dumps(True)")


def py_runs(page: Page, name: str, key: str) -> int:
    """How many times Python live query ``key`` has run."""
    return int(py(page, f"json.dumps(LD[{name!r}]['lives'][{key!r}].runs)"))


def py_seed_and_watch_t(page: Page, name: str) -> None:
    """Store t-1 (on T) and u-1 (on U); start Python live query "T" and see ``["t-1"]``."""
    py_put(page, name, node("t-1", T, 1), node("u-1", U, 1))
    py_watch(page, name, "T", T)
    py_wait_result(page, name, "T", ["t-1"])


@pytest.fixture()
def live_db_name(behavior_page: Page) -> Iterator[str]:
    """A fresh database name; afterwards every connection to it is closed and it is deleted.

    The page is the harness page with tests/behavior importable (the prelude imports
    ``behavior.waiting``).
    """
    harness_page = behavior_page
    name = f"live-dexie-{uuid.uuid4().hex[:10]}"
    yield name
    errors = py(
        harness_page,
        f"e = [repr(x) for x in LD.get({name!r}, {{}}).get('errors', [])]\n"
        f"ld_close({name!r})\njson.dumps(e)",
    )
    dexie(harness_page, "close", name)
    assert harness_page.evaluate(DELETE_DB, name) == "deleted"
    assert errors == [], "a Python live query failed"


@pytest.fixture()
def second_page(harness_page: Page, web_server: str, live_db_name: str) -> Iterator[Page]:
    """A blank page of the harness page's origin, in its browser context (no Pyodide)."""
    page = harness_page.context.new_page()
    url = f"{web_server}live-dexie-blank.html"
    page.route(url, lambda route: route.fulfill(content_type="text/html", body="<!doctype html>"))
    page.goto(url)
    yield page
    dexie(page, "close", live_db_name)
    page.close()


def pages(harness_page: Page, second_page: Page, where: str) -> Page:
    """The page Dexie runs in: the harness page itself, or the second page."""
    return harness_page if where == "same" else second_page


WHERE = pytest.mark.parametrize("where", ["same", "second"])

# -- 1. a Python write wakes Dexie's liveQuery --------------------------------------------

SUPPRESS_BC = """() => {
  const original = BroadcastChannel.prototype.postMessage;
  globalThis.__suppressed = [];
  globalThis.__events = [];
  const onEvent = (e) => globalThis.__events.push(JSON.stringify(e.detail));
  addEventListener("x-storagemutated-1", onEvent);
  BroadcastChannel.prototype.postMessage = function (message) {
    globalThis.__suppressed.push(JSON.stringify(message));
  };
  globalThis.__unsuppress = () => {
    BroadcastChannel.prototype.postMessage = original;
    removeEventListener("x-storagemutated-1", onEvent);
  };
  return true;
}"""


def test_python_write_wakes_dexie_live_query_in_the_same_page(
    harness_page: Page, live_db_name: str
) -> None:
    """The CustomEvent alone carries it: this page's BroadcastChannel posts are dropped."""
    py_put(harness_page, live_db_name, node("t-1", T, 1), node("u-1", U, 1))
    dexie_watch(harness_page, live_db_name, "T", T, ["t-1"])
    harness_page.evaluate(SUPPRESS_BC)
    try:
        py_put(harness_page, live_db_name, node("t-new", T, 2))
        wait_emitted(harness_page, live_db_name, "T", ["t-1", "t-new"])
        events = harness_page.evaluate("() => globalThis.__events")
        suppressed = harness_page.evaluate("() => globalThis.__suppressed")
    finally:
        harness_page.evaluate("() => globalThis.__unsuppress()")
    assert any(live_db_name in e and '"t-new"' in e for e in events), events
    assert any(live_db_name in m and '"t-new"' in m for m in suppressed), "Python never posted"
    assert dexie(harness_page, "watches", live_db_name)["T"]["errors"] == []


def test_python_write_wakes_dexie_live_query_in_a_second_page(
    harness_page: Page, second_page: Page, live_db_name: str
) -> None:
    """The BroadcastChannel carries it to another page of the same origin."""
    py_put(harness_page, live_db_name, node("t-1", T, 1))
    dexie_watch(second_page, live_db_name, "T", T, ["t-1"])
    py_put(harness_page, live_db_name, node("t-new", T, 2))
    wait_emitted(second_page, live_db_name, "T", ["t-1", "t-new"])
    py_put(harness_page, live_db_name, node("t-newer", T, 3), node("u-1", U, 1))
    wait_emitted(second_page, live_db_name, "T", ["t-1", "t-new", "t-newer"])
    assert dexie(second_page, "watches", live_db_name)["T"]["errors"] == []


# -- 2. Dexie's writes wake a Python live query -------------------------------------------


@WHERE
def test_dexie_put_bulk_put_and_delete_wake_a_python_live_query(
    harness_page: Page, second_page: Page, live_db_name: str, where: str
) -> None:
    page = pages(harness_page, second_page, where)
    py_seed_and_watch_t(harness_page, live_db_name)
    dexie(page, "put", live_db_name, node("t-put", T, 2))
    py_wait_result(harness_page, live_db_name, "T", ["t-1", "t-put"])
    dexie(page, "bulkPut", live_db_name, [node("t-bulk-a", T, 3), node("t-bulk-b", T, 4)])
    py_wait_result(harness_page, live_db_name, "T", ["t-1", "t-put", "t-bulk-a", "t-bulk-b"])
    dexie(page, "delete", live_db_name, "t-put")
    py_wait_result(harness_page, live_db_name, "T", ["t-1", "t-bulk-a", "t-bulk-b"])
    # An update in place (same key, same thread, new payload) is a change too.
    py(
        harness_page,
        f"await ld_watch({live_db_name!r}, 'texts', {T!r}, texts=True)\njson.dumps(True)",
    )
    dexie(page, "put", live_db_name, {**node("t-1", T, 1), "payload": {"text": "edited"}})
    py_wait_result(
        harness_page,
        live_db_name,
        "texts",
        ["t-1=edited", "t-bulk-a=t-bulk-a", "t-bulk-b=t-bulk-b"],
    )


# -- 3. an aborted Python transaction publishes nothing -----------------------------------


def test_aborted_python_transaction_publishes_nothing(
    harness_page: Page, second_page: Page, live_db_name: str
) -> None:
    aborted = f"aborted-{uuid.uuid4().hex[:8]}"
    second_page.evaluate(RAW_LISTEN)
    py_put(harness_page, live_db_name, node("t-1", T, 1))
    # The listener hears this database's writes (and the seed's message is out of the way).
    second_page.wait_for_function(
        "(name) => globalThis.__raw.some((m) => m.includes(name) && m.includes('\"t-1\"'))",
        arg=live_db_name,
        timeout=WAIT_MS,
    )
    second_page.evaluate("() => { globalThis.__raw = []; }")
    dexie_watch(harness_page, live_db_name, "T", T, ["t-1"])
    runs = dexie_runs(harness_page, live_db_name, "T")
    outcome = py(
        harness_page,
        f"""
st = await ld_open({live_db_name!r})
db = st["db"]
published = db.feed.published
async def body(tx):
    await tx.table("nodes").put(ld_node({aborted!r}, {T!r}, 2))
    raise RuntimeError("the body fails after its write")
try:
    await db.transaction("rw", ["nodes"], body)
    raised = None
except Exception as exc:
    raised = type(exc).__name__
await asyncio.sleep({QUIET_S})  # a wrong publication would have gone out by now
json.dumps({{"raised": raised, "published": db.feed.published - published,
            "stored": await db.table("nodes").get({aborted!r})}})
""",
    )
    assert dexie_runs(harness_page, live_db_name, "T") == runs, "Dexie's liveQuery re-ran"
    raw = second_page.evaluate("() => globalThis.__raw")
    assert [m for m in raw if live_db_name in m] == [], raw
    assert outcome == {"raised": "RuntimeError", "published": 0, "stored": None}
    # A following successful write is received, by both.
    py_put(harness_page, live_db_name, node("t-ok", T, 3))
    wait_emitted(harness_page, live_db_name, "T", ["t-1", "t-ok"])
    second_page.wait_for_function(
        "(name) => globalThis.__raw.some((m) => m.includes(name) && m.includes('\"t-ok\"'))",
        arg=live_db_name,
        timeout=WAIT_MS,
    )
    raw = second_page.evaluate("() => globalThis.__raw")
    assert not [m for m in raw if aborted in m], raw
    second_page.evaluate("() => globalThis.__rawChannel.close()")


# -- 4. precision: a change elsewhere wakes nothing on T ----------------------------------


@WHERE
def test_dexie_write_to_another_thread_does_not_rerun_python_live_query(
    harness_page: Page, second_page: Page, live_db_name: str, where: str
) -> None:
    page = pages(harness_page, second_page, where)
    py_seed_and_watch_t(harness_page, live_db_name)
    py_watch(harness_page, live_db_name, "U", U)
    runs = py_runs(harness_page, live_db_name, "T")
    dexie(page, "put", live_db_name, node("u-new", U, 2))
    # Proof the message arrived: the live query on U, on the same feed, saw it.
    py_wait_result(harness_page, live_db_name, "U", ["u-1", "u-new"])
    py(harness_page, f"await asyncio.sleep({QUIET_S})\njson.dumps(True)")
    assert py_runs(harness_page, live_db_name, "T") == runs, "the query on T re-ran"
    assert py(harness_page, f"json.dumps(ld_last({live_db_name!r}, 'T'))") == ["t-1"]
    # The control: a Dexie write on T does re-run it.
    dexie(page, "put", live_db_name, node("t-new", T, 2))
    py_wait_result(harness_page, live_db_name, "T", ["t-1", "t-new"])


@WHERE
def test_python_write_to_another_thread_does_not_wake_dexie_live_query(
    harness_page: Page, second_page: Page, live_db_name: str, where: str
) -> None:
    page = pages(harness_page, second_page, where)
    # Seeded by Dexie in its own page: no message of Python's is in flight to it.
    dexie(page, "bulkPut", live_db_name, [node("t-1", T, 1), node("u-1", U, 1)])
    dexie_watch(page, live_db_name, "T", T, ["t-1"])
    dexie_watch(page, live_db_name, "U", U, ["u-1"])
    runs = dexie_runs(page, live_db_name, "T")
    py_put(harness_page, live_db_name, node("u-new", U, 2))
    # Proof the set arrived: Dexie's liveQuery on U, in the same page, saw it.
    wait_emitted(page, live_db_name, "U", ["u-1", "u-new"])
    page.wait_for_timeout(QUIET_S * 1000)
    assert dexie_runs(page, live_db_name, "T") == runs, "Dexie's liveQuery on T re-ran"
    # The control: a Python write on T does wake it.
    py_put(harness_page, live_db_name, node("t-new", T, 2))
    wait_emitted(page, live_db_name, "T", ["t-1", "t-new"])


# -- 5. malformed messages on the real BroadcastChannel are ignored -----------------------

POST_JUNK = """(name) => {
  let deep = { from: "a", to: "a", d: 1, l: null, r: null };
  for (let i = 0; i < 1000; i++) deep = { from: "a", to: "a", d: i + 2, l: deep, r: null };
  const junk = [
    null,
    42,
    "x-storagemutated-1",
    { "idb://x/t/": 5 },
    { [`idb://${name}/nodes/`]: deep },
    { [`idb://${name}/nodes/`]: { from: "z", to: "a", d: 1, l: null, r: null } },
  ];
  const bc = new BroadcastChannel("x-storagemutated-1");
  for (const message of junk) bc.postMessage(message);
  bc.close();
  return junk.length;
}"""


def test_malformed_broadcast_messages_are_ignored(
    harness_page: Page, second_page: Page, live_db_name: str
) -> None:
    page_errors: list[str] = []

    def on_error(exc: Any) -> None:
        page_errors.append(str(exc))

    harness_page.on("pageerror", on_error)
    py_put(harness_page, live_db_name, node("t-1", T, 1))
    py_watch(harness_page, live_db_name, "T", T)
    assert py(harness_page, f"json.dumps(LD[{live_db_name!r}]['db'].feed.ignored)") == 0
    posted = second_page.evaluate(POST_JUNK, live_db_name)
    assert posted == 6
    ignored = py(
        harness_page,
        f"""
feed = LD[{live_db_name!r}]["db"].feed
await until(lambda: feed.ignored >= {posted}, WAIT_S, "the junk counted")
await asyncio.sleep({QUIET_S})  # a miscount (one message counted twice) shows by now
json.dumps(feed.ignored)
""",
    )
    assert ignored == posted
    # Still live: a real write from the second page (the same BroadcastChannel) lands.
    dexie(second_page, "put", live_db_name, node("t-after", T, 2))
    py_wait_result(harness_page, live_db_name, "T", ["t-1", "t-after"])
    harness_page.remove_listener("pageerror", on_error)
    assert page_errors == []


# -- 6. no leaks ---------------------------------------------------------------------------

COUNT = """() => {
  const m = window.panelot.py._module;
  return { pyproxies: m.pyproxy_alloc_map.size, jsrefs: m._hiwire_num_refs() };
}"""


def test_live_queries_and_connections_leave_nothing_behind(
    harness_page: Page, live_db_name: str
) -> None:
    py_put(harness_page, live_db_name, node("t-1", T, 1))
    py_watch(harness_page, live_db_name, "T", T)  # stays open: the baseline has one listener
    module = "window.panelot.py._module"
    harness_page.evaluate(f"() => {module}.enable_pyproxy_allocation_tracing()")
    try:
        state = f"""
from panelot.idb.browser.channel import BrowserChannel
gc.collect()
json.dumps({{"listeners": LD[{live_db_name!r}]["db"].feed.listeners,
            "channels": len(BrowserChannel._realm)}})
"""
        before_py = py(harness_page, state)
        before = harness_page.evaluate(COUNT)
        done = py(
            harness_page,
            f"""
db = LD[{live_db_name!r}]["db"]
body = ld_thread_ids({T!r})
for i in range(50):
    live = db.live_query(body)
    first = await asyncio.wait_for(live.__anext__(), {WAIT_MS / 1000})
    assert first == ["t-1"], first
    live.close()
for i in range(20):
    other = await Database({live_db_name!r}, PANELOT_VERSIONS).open(BrowserFactory())
    await other.table("nodes").put(ld_node(f"c-{{i}}", "thread-C", i))
    other.close()
json.dumps(True)
""",
        )
        assert done is True
        after_py = py(harness_page, state)
        after = harness_page.evaluate(COUNT)
    finally:
        harness_page.evaluate(f"() => {module}.disable_pyproxy_allocation_tracing()")
    assert after_py == before_py == {"listeners": 1, "channels": before_py["channels"]}
    assert after["pyproxies"] == before["pyproxies"], (before, after)
    assert after["jsrefs"] <= before["jsrefs"] + 5, (before, after)
    # The connection left open still works.
    py_put(harness_page, live_db_name, node("t-2", T, 2))
    py_wait_result(harness_page, live_db_name, "T", ["t-1", "t-2"])
