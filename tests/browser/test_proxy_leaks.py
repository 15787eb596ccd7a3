"""No proxy leaks: 10,000 store operations leave as many live proxies as before.

Counts, through Pyodide's own (private) debugging hooks, both the PyProxies alive in
JS (allocation tracing) and the JS references held by Python (hiwire slots).
"""

from __future__ import annotations

from playwright.sync_api import Page

from browser_harness import run_py

COUNT = """() => {
  const m = window.panelot.py._module;
  return { pyproxies: m.pyproxy_alloc_map.size, jsrefs: m._hiwire_num_refs() };
}"""

WORKLOAD = """
import gc, json
from panelot.idb import Database, SchemaVersion, MIN_KEY, MAX_KEY
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore

async def workload():
    db = await Database("leaks", [SchemaVersion(1, {"items": "id, g, [g+n], *tags"})]).open(BrowserFactory())
    t = db.table("items")
    ops = 0
    for round_ in range(24):
        await t.bulk_put([{"id": f"{round_}-{i}", "g": i % 7, "n": i, "tags": ["a", "b"]} for i in range(100)])
        ops += 100
        async def body(tx):
            tt = tx.table("items")
            for i in range(100):
                r = await tt.get(f"{round_}-{i}")
                await tt.put({**r, "n": r["n"] + 1})
            return 200
        ops += await db.transaction("rw", ["items"], body)
        for g in range(7):
            await t.where("[g+n]").between([g, MIN_KEY], [g, MAX_KEY]).reverse().limit(5).to_list()
            await t.where("g").equals(g).count()
            await t.where("tags").equals("a").primary_keys()
            ops += 3
        await t.where("g").any_of([1, 2]).delete()
        ops += 1
        for i in range(50):
            await t.get(f"{round_}-{i}")
            await t.update(f"{round_}-{i}", {"n": 0})
            ops += 2
    db.close()
    await BrowserFactory().delete("leaks")
    return ops

ops = await workload()
store = await PanelotStore.open(BrowserFactory(), browser_host(), "leaks-store")
tid = await store.create_thread("x")
for i in range(200):
    await store.append(tid, "user_message", {"content": [{"type": "text", "text": str(i)}]})
await store.context(tid)
await store.snapshot(tid)
store.close()
await BrowserFactory().delete("leaks-store")
gc.collect()
json.dumps(ops + 203)
"""


def test_ten_thousand_operations_leave_no_proxies(harness_page: Page) -> None:
    harness_page.evaluate("() => window.panelot.py._module.enable_pyproxy_allocation_tracing()")
    run_py(harness_page, "import gc, json\ngc.collect()\njson.dumps(0)")
    before = harness_page.evaluate(COUNT)
    ops = run_py(harness_page, WORKLOAD)
    run_py(harness_page, "import gc, json\ngc.collect()\njson.dumps(0)")
    after = harness_page.evaluate(COUNT)
    harness_page.evaluate("() => window.panelot.py._module.disable_pyproxy_allocation_tracing()")
    assert ops >= 10_000
    assert after["pyproxies"] == before["pyproxies"], (before, after)
    assert after["jsrefs"] <= before["jsrefs"] + 5, (before, after)


CLOSE_IN_COMPLETE = """
import asyncio, gc, json
from panelot.idb import Database, SchemaVersion
from panelot.idb.browser import BrowserFactory

async def close_in_complete():
    # A transaction resumes its task from the IndexedDB complete event (idb.waiter), so
    # the close below runs inside that event's handler proxy, and so does the next open.
    for i in range(20):
        db = await Database("close-in-complete", [SchemaVersion(1, {"items": "id"})]).open(BrowserFactory())
        await db.table("items").put({"id": i})
        db.close()
    # A close while a transaction still runs: its handlers stay until it settles.
    db = await Database("close-in-complete", [SchemaVersion(1, {"items": "id"})]).open(BrowserFactory())
    pending = asyncio.ensure_future(db.table("items").put({"id": "late"}))
    await asyncio.sleep(0)
    db.close()
    await asyncio.wait_for(pending, 10)  # destroyed handlers would leave it waiting forever
    await asyncio.sleep(0.05)
    await BrowserFactory().delete("close-in-complete")

await close_in_complete()
gc.collect()
json.dumps(0)
"""


def test_closing_inside_a_complete_event_raises_nothing_and_frees_the_handlers(
    harness_page: Page,
) -> None:
    errors: list[str] = []
    harness_page.on("pageerror", lambda exc: errors.append(str(exc)))
    harness_page.evaluate("() => window.panelot.py._module.enable_pyproxy_allocation_tracing()")
    run_py(harness_page, "import gc, json\ngc.collect()\njson.dumps(0)")
    before = harness_page.evaluate(COUNT)
    run_py(harness_page, CLOSE_IN_COMPLETE)
    harness_page.wait_for_timeout(200)  # a late page error would arrive by now
    after = harness_page.evaluate(COUNT)
    harness_page.evaluate("() => window.panelot.py._module.disable_pyproxy_allocation_tracing()")
    assert errors == []
    assert after["pyproxies"] == before["pyproxies"], (before, after)
