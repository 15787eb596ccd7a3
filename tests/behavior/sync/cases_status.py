"""``sync.status`` says what a user needs: changes waiting, progress, the last failure.

Against the test CouchDB server, on both cores. What another context sees is read with
a second :class:`~panelot.sync.section.Syncer` over the same databases (in a page: a
second IndexedDB connection). Nothing sleeps for a guess: a loop's backoff waits on an
injected sleep that the case releases, and a sync in flight is held by a gated
``Host.http`` (the case's own HTTP call, waiting on an event before one request) while
the case reads its progress.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import text
from behavior.sync import (
    all_docs,
    clear_faults,
    fault,
    http_json,
    new_database,
    server,
    synced_store,
    until,
)
from panelot.errors import NetworkError
from panelot.host import HttpRequest, HttpResponse
from panelot.idb import Transaction
from panelot.store import PanelotStore
from panelot.sync.background import sync_once
from panelot.sync.fetch import GET_CHUNK
from panelot.sync.progress import STALE_MS
from panelot.sync.section import Syncer
from panelot.sync.state import write_meta

TIMEOUT = 30.0


@asynccontextmanager
async def _elsewhere(ctx: Ctx, store: PanelotStore) -> AsyncIterator[Syncer]:
    """Another context's sync section over ``store``'s databases."""
    other = Syncer(store.db, ctx.factory, ctx.clock)
    try:
        yield other
    finally:
        other.close()


def _missing_database() -> str:
    return f"panelot-missing-{uuid.uuid4().hex[:10]}"


async def _fill(store: PanelotStore, threads: int, nodes: int) -> int:
    """``threads`` threads of ``nodes`` messages each; how many documents they make."""
    for t in range(threads):
        tid = await store.create_thread(f"Status {t}")
        for n in range(nodes):
            await store.append(tid, "user_message", text(f"message {t}.{n}"))
    return threads * (nodes + 1)


class _Gate:
    """A ``Host.http`` that holds the ``nth`` request whose URL holds ``part``."""

    def __init__(self, base: Callable[[HttpRequest], Awaitable[HttpResponse]], part: str, nth: int):
        self.base, self.part, self.nth = base, part, nth
        self.seen = 0
        self.held = asyncio.Event()
        self.open = asyncio.Event()

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.part in request.url:
            self.seen += 1
            if self.seen == self.nth:
                self.held.set()
                await self.open.wait()
        return await self.base(request)


async def _held(gate: _Gate, task: asyncio.Future[Any], what: str) -> None:
    """Wait until ``gate`` holds its request (fail if ``task`` ends first)."""
    waiter = asyncio.ensure_future(gate.held.wait())
    done, _ = await asyncio.wait({waiter, task}, timeout=TIMEOUT, return_when="FIRST_COMPLETED")
    if waiter not in done:
        waiter.cancel()
        if task in done:
            raise AssertionError(f"{what} ended before the gate held it: {task.result()!r}")
        raise AssertionError(f"timed out waiting for {what} to reach the gate")


async def case_waiting_rises_with_writes_a_loop_failure_shows_elsewhere_then_clears(
    ctx: Ctx,
) -> None:
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    database = _missing_database()  # the loop fails until it is created
    await store.command("sync.configure", {"server": server(), "database": database})
    released = asyncio.Event()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # the backoff waits until the case says
        waits.append(seconds)
        await released.wait()

    store.sync.sleep = sleep
    store.sync.poll_seconds = 1.0
    async with _elsewhere(ctx, store) as other:
        status = await other.status()
        assert status["waiting"] == 0 and status["wide"] is False, status
        assert status["failure"] is None and status["progress"] is None, status
        await store.command("sync.start", {})

        async def failed() -> Any:
            return (await other.status())["failure"]

        await until(failed, "the loop's failure in the other context's status")
        seen = (await other.status())["failure"]
        assert seen["source"] == "loop" and seen["name"] == "NetworkError", seen
        assert seen["field"] == "database" and database in seen["message"], seen
        assert isinstance(seen["at"], int) and 0 < seen["nextTry"] - seen["at"] <= 1000, seen

        tid = await store.create_thread("Waits for the server")

        async def waiting() -> int:
            count: int = (await other.status())["waiting"]
            return count

        await until(waiting, "the new thread waiting in the outbox")
        first = await waiting()
        nid = (await store.append(tid, "user_message", text("and a message")))["nodeId"]

        async def more() -> bool:
            return await waiting() > first

        await until(more, "the message waiting too")
        assert (await store.query("sync.status"))["waiting"] == await waiting()

        status, said = await http_json(ctx, "PUT", f"{server()}/{database}")
        assert status in (201, 202), (status, said)
        released.set()  # the next try finds the database

        async def sent() -> bool:
            now = await other.status()
            return now["waiting"] == 0 and now["failure"] is None

        await until(sent, "every change sent and the failure cleared")
        docs = await all_docs(ctx, database)
        assert {f"threads:{tid}", f"nodes:{nid}"} <= set(docs), sorted(docs)
        mine = await store.query("sync.status")
        assert mine["failure"] is None and mine["lastError"] is None, mine
        assert waits[0] == 1.0, waits
        await store.command("sync.stop", {})


async def case_another_database_leaves_changes_to_compare(ctx: Ctx) -> None:
    store, _ = await synced_store(ctx)
    await store.create_thread("Compared later")
    await store.command("sync.push", {})
    status = await store.query("sync.status")
    assert status["waiting"] == 0 and status["wide"] is False, status
    other = await new_database(ctx)
    await store.command("sync.configure", {"server": server(), "database": other})
    status = await store.query("sync.status")
    assert status["waiting"] == 1 and status["wide"] is True, status


async def case_a_pull_of_many_documents_reports_its_progress_to_every_context(
    ctx: Ctx,
) -> None:
    a, database = await synced_store(ctx)
    count = await _fill(a, 2, GET_CHUNK // 2 + 5)  # more than one _bulk_get
    assert count > GET_CHUNK
    await a.command("sync.push", {})
    gate = _Gate(ctx.host.http, "/_bulk_get", 2)
    b = await ctx.store(dataclasses.replace(ctx.host, http=gate))
    assert b.sync is not None
    ctx.names.append(b.sync.state_name)
    await b.command("sync.configure", {"server": server(), "database": database})
    async with _elsewhere(ctx, b) as other:
        pulling = asyncio.ensure_future(b.command("sync.pull", {}))
        try:
            await _held(gate, pulling, "the pull's second _bulk_get")
            progress = (await other.status())["progress"]
            assert progress is not None, "no progress while the pull waits on the server"
            assert progress["phase"] == "receiving" and progress["total"] == count, progress
            assert progress["done"] in (0, GET_CHUNK) and progress["source"] == "command"
            assert (await b.query("sync.status"))["progress"] == progress
        finally:
            gate.open.set()
        report = await pulling
        assert report["pulled"] == count, report
        assert (await other.status())["progress"] is None
        assert (await b.query("sync.status"))["progress"] is None


async def case_a_push_reports_sending_then_clears_it_also_on_failure(ctx: Ctx) -> None:
    database = await new_database(ctx)
    gate = _Gate(ctx.host.http, "/_bulk_docs", 2)
    a = await ctx.store(dataclasses.replace(ctx.host, http=gate))
    assert a.sync is not None
    ctx.names.append(a.sync.state_name)
    await a.command("sync.configure", {"server": server(), "database": database})
    a.sync.batch_docs = 10
    count = await _fill(a, 1, 54)
    async with _elsewhere(ctx, a) as other:
        pushing = asyncio.ensure_future(a.command("sync.push", {}))
        try:
            await _held(gate, pushing, "the push's second _bulk_docs")
            progress = (await other.status())["progress"]
            assert progress is not None, "no progress while the push waits on the server"
            assert progress["phase"] == "sending" and progress["total"] == count, progress
            assert progress["done"] in (0, 10), progress
        finally:
            gate.open.set()
        report = await pushing
        assert report["pushed"] == count and report["batches"] == 6, report
        assert (await other.status())["progress"] is None
        # A push that fails while sending clears its progress too.
        await _fill(a, 1, 3)
        await fault(ctx, f"/{database}/_bulk_docs", "500")
        try:
            await raises(NetworkError, a.command("sync.push", {}))
        finally:
            await clear_faults(ctx)
        assert (await other.status())["progress"] is None


async def case_a_stale_progress_row_is_not_shown(ctx: Ctx) -> None:
    store, _ = await synced_store(ctx)
    assert store.sync is not None
    state = await store.sync.state()
    now = ctx.now

    async def put(at: int) -> None:
        row = {"phase": "receiving", "done": 5, "total": 9, "at": at, "source": "loop"}

        async def write(tx: Transaction) -> None:
            await write_meta(tx, "progress", {**row, "id": "x"})

        await state.transaction("rw", ["meta"], write)

    await put(now - STALE_MS - 10)  # a context killed mid-sync left it
    assert (await store.query("sync.status"))["progress"] is None
    await put(now)
    shown = (await store.query("sync.status"))["progress"]
    assert shown == {"phase": "receiving", "done": 5, "total": 9, "at": now, "source": "loop"}


async def case_a_background_failure_shows_everywhere_until_a_success(ctx: Ctx) -> None:
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    database = _missing_database()
    await store.command("sync.configure", {"server": server(), "database": database})
    await store.create_thread("Background")
    report = await sync_once(store)
    assert report["configured"] is True and report["ok"] is False, report
    async with _elsewhere(ctx, store) as other:
        seen = (await other.status())["failure"]
        assert seen is not None and seen["source"] == "background", seen
        assert seen["name"] == "NetworkError" and seen["field"] == "database", seen
        assert seen["nextTry"] is None and isinstance(seen["at"], int), seen
        assert (await other.status())["progress"] is None
        status, said = await http_json(ctx, "PUT", f"{server()}/{database}")
        assert status in (201, 202), (status, said)
        await other.push(ctx.host)  # a success in another context clears it
        assert (await store.query("sync.status"))["failure"] is None
        assert (await other.status())["failure"] is None
