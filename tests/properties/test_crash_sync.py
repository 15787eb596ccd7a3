"""Crash consistency of ``sync.pull`` and ``sync.push``: the browser killed mid-sync (issue 39).

Same method as test_crash_message_send.py: kill points from a fixed seed, at random
offsets across the command (a first run, not killed, measures it; the kill window
follows the command's speed). Every fifth kill SIGKILLs the whole browser, the others
close the page's renderer; the same profile directory is reopened each time.

**Pull.** For each kill point a CPython store (memory core, urllib) pushed a known set
to a database of its own on the test server beforehand: 3 threads of 30 nodes, one
with an attachment. A fresh browser store (a store name per kill point) pulls it and
is killed somewhere in the pull. After the restart: every thread is here whole (the
thread, all its nodes and its attachment: ``apply_thread``'s one transaction) or
absent with nothing of it; nothing is here twice; the pull checkpoint (the state's and
the server's ``_local``) is never ahead of what was applied, nor are the state's
document rows. Then a ``sync.pull`` completes, the store holds exactly the server's
set, and a ``sync.push`` finds nothing to send (no sibling revision of a pulled
record: no duplicate on the server).

**Push.** One browser store holds a known set (the same shape); for each kill point it
is configured to a fresh database (which drops what the state knew) and pushes, in
batches of 10 documents so the kill can land between batches, and is killed in the
push. After the restart (on every other kill point a thread is renamed first: the
change must follow the revision the server may have taken, never be its sibling) a
``sync.push`` completes; the server then holds every record exactly once with one
revision (``1-``; the renamed thread ``1-`` or its child ``2-``), no ``_conflicts``
and no other leaf in ``_changes?style=all_docs``, and its documents' records are the
store's. (The window where the server took a batch whose answer is not yet recorded
is narrow here; ``cases_faults.py`` opens it on purpose with a cut answer.)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import random
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, Playwright

from behavior.payloads import answer, b64, text
from behavior.sync import OPEN_ENV
from browser_harness import run_py
from crash_support import CrashableBrowser, KillWindow, kill
from panelot.host import memory_host
from panelot.idb import MemoryFactory
from panelot.store import PanelotStore
from panelot.sync.docid import SYNCED_TABLES
from panelot.sync.mapping import local_view
from panelot.sync.push import replication_id

KILL_POINTS = 10
THREADS, TURNS = 3, 15  # 30 nodes a thread
DATA = bytes(range(256)) * 64  # 16 KiB
BATCH = 10

#: Starts ``window.__job``: Python code run without waiting for it (the test kills it).
KICK_PY = "([code]) => { window.__job = window.panelot.py.runPythonAsync(code); }"

OPEN = """
import json
from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
crash_store = await PanelotStore.open(BrowserFactory(), browser_host(), name={name!r}, search=False)
crash_store.sync.batch_docs = {batch}
json.dumps(True)
"""

CONFIGURE = """
import json
await crash_store.command("sync.configure", {{"server": {server!r}, "database": {database!r}}})
json.dumps(True)
"""

#: Timed in the page: the command's own duration, the store already open.
TIMED = """
import json, time
t0 = time.perf_counter()
report = await crash_store.command({command!r}, {{}})
json.dumps([report, time.perf_counter() - t0])
"""

RUN = """
import json
json.dumps(await crash_store.command({command!r}, {{}}))
"""

STATE = """
import json
from panelot.sync.mapping import local_view
from panelot.sync.state import read_meta
s = crash_store
records = {}
for table in ("threads", "nodes", "attachments"):
    for row in await s.db.table(table).to_collection().to_list():
        did = f"{table}:{row['id']}"
        assert did not in records, did
        view = local_view(table, row)
        if table == "attachments":
            view["hasBytes"] = row.get("bytes") is not None
        records[did] = view
state = await s.sync.state()
async def read(tx):
    return await read_meta(tx, "pull"), await tx.table("docs").to_collection().to_list()
pull, docs = await state.transaction("r", ["meta", "docs"], read)
json.dumps({"records": records, "pull": pull, "docs": [d["id"] for d in docs if not d.get("deleted")]})
"""

RENAME = """
import json
json.dumps(await crash_store.command("thread.update", {args!r}))
"""

#: The setup must survive a SIGKILL (Chromium commits with relaxed durability; see
#: test_crash_message_send.py's NEW_THREAD): its threads are written again, strict.
FILL = """
import json
tids = []
for t in range({threads}):
    tid = await crash_store.create_thread(f"kill {{t}}")
    tids.append(tid)
    for i in range({turns}):
        await crash_store.append(tid, "user_message", {user!r})
        await crash_store.append(tid, "assistant_message", {reply!r})
await crash_store.command("attachment.put", {{"threadId": tids[0], "kind": "file",
                                              "mime": "application/octet-stream", "dataBase64": {data!r}}})
async def again(tx):
    t = tx.table("threads")
    for tid in tids:
        await t.put(await t.get(tid))
await crash_store.db.transaction("rw", ["threads"], again, durability="strict")
json.dumps(tids)
"""


def _server() -> str:
    return os.environ[OPEN_ENV]


def _http(method: str, url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - 127.0.0.1
        return json.loads(response.read())


def _new_database(prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:12]}"
    assert _http("PUT", f"{_server()}/{name}")["ok"]
    return name


def _server_docs(database: str, edited: frozenset[str] = frozenset()) -> dict[str, dict[str, Any]]:
    """The server's live documents; each sent once: one ``1-`` revision, no other leaf.

    A document of ``edited`` (changed here after the kill) may have a ``2-`` revision:
    the change, a child of the first.
    """
    url = f"{_server()}/{database}/_all_docs?include_docs=true&conflicts=true"
    docs = {row["id"]: row["doc"] for row in _http("GET", url)["rows"]}
    for did, doc in docs.items():
        assert doc["_rev"].startswith("1-") or (did in edited and doc["_rev"].startswith("2-")), (
            did,
            doc["_rev"],
        )
        assert "_conflicts" not in doc and "_deleted_conflicts" not in doc, (did, doc)
    ids = urllib.parse.quote(json.dumps(sorted(docs)))
    changes = _http("GET", f"{_server()}/{database}/_changes?style=all_docs&doc_ids={ids}")
    for change in changes["results"]:
        assert len(change["changes"]) == 1, change  # one leaf: no deleted sibling either
    return docs


def _server_checkpoint(database: str, device: str) -> Any:
    """The server's ``_local`` pull checkpoint of ``device`` (``None``: none)."""
    rid = replication_id(device, _server(), database, "pull")
    try:
        return _http("GET", f"{_server()}/{database}/_local/{rid}")
    except urllib.error.HTTPError as exc:
        assert exc.code == 404, exc
        return None


def _without_bytes(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {k: {x: y for x, y in v.items() if x != "hasBytes"} for k, v in records.items()}


def _records_of(docs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {did: doc["record"] for did, doc in docs.items()}


async def _reference(database: str) -> dict[str, Any]:
    """A CPython store (another device) writes the known set and pushes it to ``database``."""
    store = await PanelotStore.open(MemoryFactory(), memory_host(), search=False)
    try:
        await store.command("sync.configure", {"server": _server(), "database": database})
        tids = []
        for t in range(THREADS):
            tid = await store.create_thread(f"pulled {t}")
            tids.append(tid)
            for i in range(TURNS):
                await store.append(tid, "user_message", text(f"{t}: question {i}"))
                await store.append(tid, "assistant_message", answer(f"{t}: answer {i}"))
        put = {"threadId": tids[0], "kind": "file", "mime": "text/plain", "dataBase64": b64(DATA)}
        await store.command("attachment.put", put)
        report = await store.command("sync.push", {})
        records = {}
        for table in SYNCED_TABLES:
            for row in await store.db.table(table).to_collection().to_list():
                records[f"{table}:{row['id']}"] = local_view(table, row)
        assert report["pushed"] == len(records), report
        return {"tids": tids, "records": records}
    finally:
        store.close()


def _threads_whole_or_absent(
    records: dict[str, dict[str, Any]], reference: dict[str, dict[str, Any]], point: int
) -> int:
    """Each reference thread is here with all its records, or nothing of it is; how many are."""
    whole = 0
    for did, record in reference.items():
        if not did.startswith("threads:"):
            continue
        tid = record["id"]
        mine = {k for k in reference if k == did or reference[k].get("threadId") == tid}
        here = {k for k in records if k == did or records[k].get("threadId") == tid}
        assert here in (set(), mine), (point, tid, sorted(mine ^ here)[:5])
        whole += here == mine
    assert set(records) <= set(reference), (point, sorted(set(records) - set(reference)))
    return whole


@pytest.fixture()
def crashable(
    playwright: Playwright, web_server: str, couch_servers: dict[str, str]
) -> Iterator[CrashableBrowser]:
    with tempfile.TemporaryDirectory(prefix="panelot-crash-sync-") as profile:
        browser = CrashableBrowser(playwright, profile, f"{web_server}index.html")
        yield browser
        browser.close()


def _open(browser: CrashableBrowser, name: str) -> Page:
    page = browser.page()
    run_py(page, OPEN.format(name=name, batch=BATCH))
    return page


def _configure(page: Page, database: str) -> None:
    run_py(page, CONFIGURE.format(server=_server(), database=database))


def test_sync_pull_survives_kills(crashable: CrashableBrowser) -> None:
    rng = random.Random(20261204)
    started = time.perf_counter()
    databases = [_new_database("crash-pull") for _ in range(KILL_POINTS + 1)]

    async def references() -> list[dict[str, Any]]:
        return [await _reference(d) for d in databases]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # Playwright's loop runs here
        sets = pool.submit(asyncio.run, references()).result()
    page = _open(crashable, "pull-warm-up")
    _configure(page, databases[0])
    report, took = run_py(page, TIMED.format(command="sync.pull"))
    assert report["refused"] == [] and report["onServer"] == [], report
    state = run_py(page, STATE)
    assert state["records"].keys() == sets[0]["records"].keys()
    page.close()
    window = KillWindow(rng, float(took))
    outcomes = {"none": 0, "some": 0, "all": 0}
    for point in range(KILL_POINTS):
        database, reference = databases[point + 1], sets[point + 1]["records"]
        name = f"pull-{point}"
        page = _open(crashable, name)
        _configure(page, database)
        page.evaluate(KICK_PY, [RUN.format(command="sync.pull")])
        kill(crashable, page, point, window.next())
        page = _open(crashable, name)
        state = run_py(page, STATE)
        records = state["records"]
        whole = _threads_whole_or_absent(records, reference, point)
        assert all(r["hasBytes"] for k, r in records.items() if k.startswith("attachments:"))
        assert set(state["docs"]) <= set(records), (
            point,
            sorted(set(state["docs"]) - set(records)),
        )
        if state["pull"] is not None:  # the checkpoint is written after everything applied
            assert whole == THREADS, (point, whole)
        device = run_py(
            page, 'import json\njson.dumps((await crash_store.query("sync.status"))["device"])'
        )
        if device is not None:  # the device id is made by the pull's start: none, no checkpoint
            assert _server_checkpoint(database, device) is None or whole == THREADS, point
        key = "all" if whole == THREADS else "some" if whole else "none"
        outcomes[key] += 1
        window.saw(whole == THREADS and state["pull"] is not None)
        again = run_py(page, RUN.format(command="sync.pull"))
        assert again["refused"] == [] and again["onServer"] == [], (point, again)
        state = run_py(page, STATE)
        records = _without_bytes(state["records"])
        assert records == _records_of(_server_docs(database)) == reference, point
        pushed = run_py(page, RUN.format(command="sync.push"))
        assert pushed["pushed"] == 0 and pushed["deleted"] == 0, (point, pushed)
        assert _records_of(_server_docs(database)) == reference, point
        page.close()
    took_all = time.perf_counter() - started
    print(
        f"sync.pull kill points: {json.dumps(outcomes)} (pull {took:.2f} s, test {took_all:.1f} s)"
    )


def test_sync_push_survives_kills(crashable: CrashableBrowser) -> None:
    rng = random.Random(20261205)
    started = time.perf_counter()
    page = _open(crashable, "push-crash")
    user, reply = text("a question"), answer("an answer")
    fill = FILL.format(threads=THREADS, turns=TURNS, user=user, reply=reply, data=b64(DATA))
    tids = run_py(page, fill)
    state = run_py(page, STATE)
    expected = _without_bytes(state["records"])
    assert len(expected) == THREADS * (1 + 2 * TURNS) + 1
    warm = _new_database("crash-push")
    _configure(page, warm)
    report, took = run_py(page, TIMED.format(command="sync.push"))
    assert report["pushed"] == len(expected), report
    assert _records_of(_server_docs(warm)) == expected
    window = KillWindow(rng, float(took))
    outcomes = {"before": 0, "during": 0, "after": 0}
    for point in range(KILL_POINTS):
        database = _new_database("crash-push")
        _configure(page, database)
        page.evaluate(KICK_PY, [RUN.format(command="sync.push")])
        kill(crashable, page, point, window.next())
        page = _open(crashable, "push-crash")
        there = len(_server_docs(database))
        outcomes["before" if there == 0 else "after" if there == len(expected) else "during"] += 1
        window.saw(there == len(expected))
        edited: frozenset[str] = frozenset()
        if point % 2:  # a change after the restart: a child of what the server may have
            patch = {"threadId": tids[0], "patch": {"title": f"renamed {point}"}}
            run_py(page, RENAME.format(args=patch))
            expected = _without_bytes(run_py(page, STATE)["records"])
            edited = frozenset({f"threads:{tids[0]}"})
        again = run_py(page, RUN.format(command="sync.push"))
        assert again["pushed"] + again["unchanged"] == len(expected), (point, again)
        assert _records_of(_server_docs(database, edited)) == expected, point
        assert run_py(page, RUN.format(command="sync.push"))["pushed"] == 0, point
    took_all = time.perf_counter() - started
    print(
        f"sync.push kill points: {json.dumps(outcomes)} (push {took:.2f} s, test {took_all:.1f} s)"
    )
