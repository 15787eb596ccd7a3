"""Continuous sync (``sync.start`` / ``sync.stop``) against a real CouchDB-compatible server.

Stores A and B are two stores of the case (two devices), configured with one fresh
server database, each running the loop. Every wait is for the state that proves the
action landed (a record on the other store, the outbox empty, a document on the
server), bounded; the backoff's waits go through an injected sleep that records them,
so no case waits real seconds for a retry.
"""

from __future__ import annotations

import asyncio
from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from behavior.sync import all_docs, http_json, second_store, server, synced_store, until
from behavior.waiting import result_where
from panelot.store import PanelotStore
from panelot.sync.live import BACKOFF_MAX, backoff

POLL = 1.0  # the long-poll's timeout here: a stopped loop's last request ends soon
TIMEOUT = 30.0


async def _start(store: PanelotStore) -> dict[str, Any]:
    assert store.sync is not None
    store.sync.poll_seconds = POLL
    status: dict[str, Any] = await store.command("sync.start", {})
    return status


async def _status(store: PanelotStore) -> dict[str, Any]:
    status: dict[str, Any] = await store.query("sync.status")
    return status


async def _has_node(store: PanelotStore, nid: str) -> bool:
    return await store.db.table("nodes").get(nid) is not None


async def case_started_on_a_and_b_an_append_on_a_reaches_bs_live_query(ctx: Ctx) -> None:
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    for store in (a, b):
        status = await _start(store)
        assert status["running"] is True and status["lastError"] is None, status
    tid = await a.create_thread("Live from A")
    with b.live("thread.list", {}) as live:
        await result_where(live, lambda rows: tid in [r["id"] for r in rows], timeout=TIMEOUT)
    nid = (await a.append(tid, "user_message", text("Heard on B?")))["nodeId"]
    await until(lambda: _has_node(b, nid), "A's node on B")
    reply = (await b.append(tid, "assistant_message", answer("Yes, from B")))["nodeId"]
    await until(lambda: _has_node(a, reply), "B's reply on A")

    async def emptied() -> bool:
        return (await _status(a))["waiting"] == 0 and (await _status(b))["waiting"] == 0

    await until(emptied, "both outboxes empty")
    docs = await all_docs(ctx, database)
    assert {f"nodes:{nid}", f"nodes:{reply}", f"threads:{tid}"} <= set(docs), sorted(docs)
    for store in (a, b):
        status = await _status(store)
        assert status["running"] and status["lastError"] is None and status["nextTry"] is None
        assert status["syncing"] is True, status  # no lock in this harness: it syncs


async def case_a_push_from_the_outbox_compares_only_the_changed_records(ctx: Ctx) -> None:
    a, database = await synced_store(ctx)
    for i in range(5):  # records the start-up comparison pushes, then never reads again
        tid = await a.create_thread(f"Old {i}")
        await a.append(tid, "user_message", text(f"old {i}"))
    await _start(a)
    assert a.sync is not None
    live = a.sync.live
    assert live is not None

    async def pushed_all() -> bool:
        return live.pushes >= 1 and (await _status(a))["waiting"] == 0

    await until(pushed_all, "the start-up push")
    first = live.last_push
    assert first is not None and first["pushed"] == 10, first
    pushes = live.pushes
    nid = (await a.append(tid, "user_message", text("new")))["nodeId"]

    async def sent() -> bool:
        return live.pushes > pushes and (await _status(a))["waiting"] == 0

    await until(sent, "the outbox's push")
    report = live.last_push
    # the node and its thread (updatedAt): nothing else was compared
    assert report["pushed"] == 2 and report["unchanged"] == 0, report
    assert f"nodes:{nid}" in await all_docs(ctx, database)


async def case_a_stopped_loop_pushes_nothing_and_a_restart_sends_what_changed(
    ctx: Ctx,
) -> None:
    a, database = await synced_store(ctx)
    tid = await a.create_thread("Stop and go")
    await _start(a)

    async def on_server() -> bool:
        return f"threads:{tid}" in await all_docs(ctx, database)

    await until(on_server, "the thread on the server")
    stopped = await a.command("sync.stop", {})
    assert stopped["running"] is False and stopped["syncing"] is False, stopped
    assert a.sync is not None and a.sync.live is None
    nid = (await a.append(tid, "user_message", text("while stopped")))["nodeId"]
    # stop() returned once the loop had ended: nothing is left to push it
    assert f"nodes:{nid}" not in await all_docs(ctx, database)
    assert (await _status(a))["waiting"] == 0  # the stopped loop hears nothing
    assert f"nodes:{nid}" not in await all_docs(ctx, database)
    await _start(a)  # the start-up comparison finds what changed while stopped

    async def node_on_server() -> bool:
        return f"nodes:{nid}" in await all_docs(ctx, database)

    await until(node_on_server, "the node written while stopped, on the server")
    await a.command("sync.stop", {})


class _Sleeps:
    """An injected sleep: records each wait; from the ``hold``-th on, waits for ``go``."""

    def __init__(self, hold: int) -> None:
        self.waits: list[float] = []
        self.hold = hold
        self.go = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        if len(self.waits) >= self.hold:
            await self.go.wait()
        else:
            await asyncio.sleep(0)


async def case_a_failing_server_backs_off_doubling_and_recovers(ctx: Ctx) -> None:
    a, _ = await synced_store(ctx)
    missing = f"panelot-missing-{ctx.new_name()}"
    await a.command("sync.configure", {"server": server(), "database": missing})
    assert a.sync is not None
    sleeps = _Sleeps(hold=5)
    a.sync.sleep = sleeps
    tid = await a.create_thread("Waiting for the server")
    await _start(a)

    async def held() -> bool:
        return len(sleeps.waits) >= 5

    await until(held, "five failed tries")
    assert sleeps.waits == [1.0, 2.0, 4.0, 8.0, 16.0], sleeps.waits
    assert [backoff(n) for n in (9, 10, 50)] == [256.0, BACKOFF_MAX, BACKOFF_MAX]
    status = await _status(a)
    assert status["running"] is True, status
    assert "does not exist" in str(status["lastError"]), status
    assert 0 < status["nextTry"] - ctx.now <= 16_000, (status["nextTry"], ctx.now)
    # The server gets its database: the next try succeeds and resets the backoff.
    code, made = await http_json(ctx, "PUT", f"{server()}/{missing}")
    assert code in (201, 202), (code, made)
    sleeps.go.set()

    async def recovered() -> bool:
        # Pushed, and the outbox emptied: the thread's row may be noted after the loop's
        # first (full) push took it, and then goes with the next push from the outbox.
        docs = await all_docs(ctx, missing)
        status = await _status(a)
        return f"threads:{tid}" in docs and status["lastError"] is None and not status["waiting"]

    await until(recovered, "the thread pushed and the outbox emptied after the server recovered")
    live = a.sync.live
    assert live is not None and live.failures == 0
    status = await _status(a)
    assert status["nextTry"] is None and status["waiting"] == 0, status
    assert len(sleeps.waits) == 5  # no failure since
