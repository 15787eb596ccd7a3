"""Python side of the sync benchmark (issue 39), run inside Pyodide by sync.mjs.

sync.mjs writes this file into Pyodide's file system as ``bench_sync`` and calls its
functions; each opens a real :class:`PanelotStore` on a database the page named (seeded
with plain IndexedDB for ``sync_push``), configures sync against the bench's test server
and times only the command: ``sync.push``, ``sync.pull``. ``latency`` runs two stores
that share one server database, each running the continuous loop (``sync.start``, as an
open panel does), and stamps each commit on A and its arrival in B's live query.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import time
from typing import Any

from panelot.host import browser_host
from panelot.idb.browser import BrowserFactory
from panelot.store import PanelotStore
from panelot.sync.state import state_database, state_name

SYNCED = ("threads", "nodes", "attachments")
LIVE_TIMEOUT_S = 30.0


async def _open(name: str, server: str, database: str) -> PanelotStore:
    store = await PanelotStore.open(BrowserFactory(), browser_host(), name=name, search=False)
    await store.command("sync.configure", {"server": server, "database": database})
    return store


def _wall_ms() -> float:
    """``performance.timeOrigin + performance.now()``."""
    import js  # Pyodide only

    return float(js.performance.timeOrigin + js.performance.now())


async def delete(name: str) -> str:
    """Delete the store database ``name`` and its sync state."""
    for db_name in (name, state_name(name)):
        await BrowserFactory().delete(db_name)
    return json.dumps(True)


async def add_attachments(name: str, thread_ids_json: str, count: int, size: int) -> str:
    """Untimed seeding: ``count`` attachments of ``size`` seeded random bytes, round robin."""
    thread_ids: list[str] = json.loads(thread_ids_json)
    store = await PanelotStore.open(BrowserFactory(), browser_host(), name=name, search=False)
    try:
        for i in range(count):
            data = random.Random(i).randbytes(size)
            await store.command(
                "attachment.put",
                {
                    "threadId": thread_ids[i % len(thread_ids)],
                    "kind": "file",
                    "mime": "application/octet-stream",
                    "dataBase64": base64.b64encode(data).decode("ascii"),
                },
            )
    finally:
        store.close()
    return json.dumps(count)


async def push(name: str, server: str, database: str) -> str:
    """``sync.push`` of the store ``name`` to an empty server database; JSON ``{ms, report}``."""
    store = await _open(name, server, database)
    try:
        t0 = time.perf_counter()
        report = await store.command("sync.push", {})
        ms = (time.perf_counter() - t0) * 1000
    finally:
        store.close()
    return json.dumps({"ms": ms, "report": report})


async def pull(name: str, server: str, database: str) -> str:
    """``sync.pull`` into the fresh store ``name``; JSON ``{ms, report}``."""
    store = await _open(name, server, database)
    try:
        t0 = time.perf_counter()
        report = await store.command("sync.pull", {})
        ms = (time.perf_counter() - t0) * 1000
    finally:
        store.close()
    return json.dumps({"ms": ms, "report": report})


async def holds(name: str) -> str:
    """What the store ``name`` holds: records of the synced tables, state ``[id, rev]`` pairs."""
    store = await PanelotStore.open(BrowserFactory(), browser_host(), name=name, search=False)
    try:
        records = {t: await store.db.table(t).count() for t in SYNCED}
    finally:
        store.close()
    state = await state_database(name).open(BrowserFactory())
    try:
        rows = await state.table("docs").to_collection().to_list()
    finally:
        state.close()
    pairs = sorted([r["id"], r["rev"]] for r in rows if not r.get("deleted"))
    return json.dumps({"records": records, "pairs": pairs})


async def latency(
    name_a: str, name_b: str, server: str, database: str, commits: int, interval: float
) -> str:
    """Commit on A to B's live query result, ``commits`` times; JSON of the samples.

    Both stores run the continuous loop (``sync.start``): A pushes from its outbox a
    debounce after each commit, B's long-poll wakes and pulls. B watches the thread's
    nodes with a live query; each sample appends a node on A (stamped when the append
    returns) and waits for it in B's live query (stamped in its callback). At the end
    both loops stop and one ``sync.now`` each (A, B, then A) settles both sides, so the
    check compares finished states.
    """
    a = await _open(name_a, server, database)
    b = await _open(name_b, server, database)
    arrived: dict[str, float] = {}
    wanted: dict[str, asyncio.Event] = {}

    def on_result(rows: list[Any]) -> None:
        t = _wall_ms()
        for row in rows:
            node_id = row["id"]
            if node_id not in arrived:
                arrived[node_id] = t
                if node_id in wanted:
                    wanted[node_id].set()

    samples: list[dict[str, float]] = []
    query = None
    try:
        tid = await a.create_thread("Latency")
        query = b.db.live_query(
            lambda tx: tx.table("nodes").where("threadId").equals(tid).to_list(),
            ["nodes"],
            on_result=on_result,
            interval=interval,
        )
        for store in (a, b):
            await store.command("sync.start", {})
        for i in range(commits):
            text = {"content": [{"type": "text", "text": f"sample {i}"}]}
            node_id = str((await a.append(tid, "user_message", text))["nodeId"])
            committed = _wall_ms()
            wanted[node_id] = asyncio.Event()
            if node_id in arrived:  # cannot happen before B pulls it; kept honest
                wanted[node_id].set()
            await asyncio.wait_for(wanted[node_id].wait(), LIVE_TIMEOUT_S)
            samples.append({"ms": arrived[node_id] - committed})
        for store in (a, b):
            await store.command("sync.stop", {})
        for store in (a, b, a):
            await store.command("sync.now", {})
    finally:
        if query is not None:
            query.close()
        a.close()
        b.close()
    return json.dumps({"samples": samples, "threadId": tid})
