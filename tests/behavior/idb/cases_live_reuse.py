"""A live query's re-run reads only the keys a change names, and merges them in.

Every case compares each live result with a fresh read of the same query in a
transaction of its own, and checks the counters that say how the re-run was answered:
``patched`` (only the changed keys were read) or ``served`` (nothing of the table
changed: the last result again). The writes come from a second connection (another
context: on the browser core, through Dexie's ``x-storagemutated-1`` protocol), except
where a case says otherwise.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from behavior import Ctx
from behavior.idb.cases_live import STORES, two
from behavior.waiting import result_where
from panelot.idb import Database, Transaction
from panelot.idb.blobs import blob_bytes, is_blob, make_blob
from panelot.idb.observe import LiveQuery

Body = Callable[[Transaction], Awaitable[list[Any]]]


def nodes_of(thread: str) -> Body:
    async def body(tx: Transaction) -> list[Any]:
        return await tx.table("nodes").where("threadId").equals(thread).to_list()

    return body


def seed(thread: str, count: int, first: int = 0) -> list[dict[str, Any]]:
    return [
        {"id": f"{thread}{i:03d}", "threadId": thread, "seq": i, "text": f"t{i}"}
        for i in range(first, first + count)
    ]


async def fresh(db: Database, body: Body) -> list[Any]:
    return await db.transaction("r", ["nodes", "other"], body)


async def settles(db: Database, live: Any, body: Body) -> list[Any]:
    """The live result that equals a fresh read made after the caller's write."""
    want = await fresh(db, body)
    return await result_where(live, lambda r: r == want)  # type: ignore[no-any-return]


async def case_a_rerun_reads_the_changed_keys_and_merges_them_in_order(ctx: Ctx) -> None:
    a, b = await two(ctx)
    await a.table("nodes").bulk_put(seed("X", 20) + seed("Y", 5))
    body = nodes_of("X")
    with b.live_query(body) as live:
        await settles(b, live, body)
        # A new node whose primary key sorts among the others: it takes its place.
        await a.table("nodes").add({"id": "X005b", "threadId": "X", "seq": 99})
        rows = await settles(b, live, body)
        assert [r["id"] for r in rows][5:8] == ["X005", "X005b", "X006"]
        assert live.patched == 1 and live.served == 0, (live.patched, live.served)
        # An edit in place, a move out of the thread, a delete, a move into it.
        await a.table("nodes").put({"id": "X010", "threadId": "X", "seq": 10, "text": "new"})
        rows = await settles(b, live, body)
        assert [r["text"] for r in rows if r["id"] == "X010"] == ["new"]
        await a.table("nodes").update("X011", {"threadId": "Y"})
        rows = await settles(b, live, body)
        assert "X011" not in [r["id"] for r in rows]
        await a.table("nodes").delete("X000")
        await settles(b, live, body)
        await a.table("nodes").update("Y000", {"threadId": "X"})
        rows = await settles(b, live, body)
        assert [r["id"] for r in rows][-1] == "Y000" and len(rows) == 20
        assert live.patched == 5, f"{live.patched} of 5 re-runs read only the changed keys"


async def case_an_index_window_in_reverse_with_a_limit(ctx: Ctx) -> None:
    a, b = await two(ctx)
    await a.table("nodes").bulk_put(seed("X", 12))

    async def last_five(tx: Transaction) -> list[Any]:
        coll = tx.table("nodes").where("[threadId+seq]").between(["X", 0], ["X", 1000])
        return await coll.reverse().limit(5).to_list()

    with b.live_query(last_five, "nodes") as live:
        rows = await settles(b, live, last_five)
        assert [r["seq"] for r in rows] == [11, 10, 9, 8, 7]
        await a.table("nodes").add({"id": "X012", "threadId": "X", "seq": 12})
        rows = await settles(b, live, last_five)
        assert [r["seq"] for r in rows] == [12, 11, 10, 9, 8]
        # A node below the window (it changes nothing in it) and one outside the range.
        await a.table("nodes").put({"id": "X002", "threadId": "X", "seq": 2, "text": "e"})
        await a.table("nodes").add({"id": "Z", "threadId": "X", "seq": 5000})
        await settles(b, live, last_five)
        patched = live.patched
        assert patched >= 2, patched
        # Deleting a node of a full window: what comes next was never read, so the query
        # runs in full and the window reaches one further down.
        await a.table("nodes").delete("X011")
        rows = await settles(b, live, last_five)
        assert [r["seq"] for r in rows] == [12, 10, 9, 8, 7]
        assert live.patched == patched, "a full window lost a row and was patched"


async def case_a_change_to_another_table_serves_the_last_result(ctx: Ctx) -> None:
    a, b = await two(ctx)
    await a.table("nodes").bulk_put(seed("X", 3))

    async def both(tx: Transaction) -> list[Any]:
        nodes = await tx.table("nodes").where("threadId").equals("X").to_list()
        others = await tx.table("other").to_list()
        return [*nodes, *others]

    with b.live_query(both) as live:
        await settles(b, live, both)
        await a.table("other").put({"id": "o1"})
        rows = await settles(b, live, both)
        assert rows[-1] == {"id": "o1"} and len(rows) == 4
        assert (live.served, live.patched) == (1, 1), (live.served, live.patched)


async def case_a_result_is_the_consumers_own(ctx: Ctx) -> None:
    """Changing a result it was given does not change the next one."""
    db = await ctx.open(STORES)
    await db.table("nodes").bulk_put(seed("X", 3))
    body = nodes_of("X")
    with db.live_query(body) as live:
        first = await settles(db, live, body)
        first[0]["text"] = "scribbled"
        first.append({"id": "extra"})
        await db.table("nodes").put({"id": "X001", "threadId": "X", "seq": 1, "text": "e"})
        second = await settles(db, live, body)
        second[1]["text"] = "scribbled too"
        await db.table("nodes").put({"id": "X002", "threadId": "X", "seq": 2, "text": "f"})
        third = await settles(db, live, body)
        assert [r["text"] for r in third] == ["t0", "e", "f"]
        assert live.patched == 2, live.patched


async def case_a_wide_change_reads_the_query_in_full(ctx: Ctx) -> None:
    a, b = await two(ctx)
    await a.table("nodes").bulk_put(seed("X", 3))
    body = nodes_of("X")
    with b.live_query(body) as live:
        await settles(b, live, body)
        # 60 keys: more than a patch reads.
        await a.table("nodes").bulk_put(seed("X", 60, first=3))
        rows = await settles(b, live, body)
        assert len(rows) == 63
        assert live.patched == 0 and live.served == 0, (live.patched, live.served)
        # A collection's delete names the keys it deletes (10 here).
        await a.table("nodes").where("id").between("X010", "X020").delete()
        rows = await settles(b, live, body)
        assert len(rows) == 53 and live.patched == 1, live.patched
        # A table's clear names none: a range of every key.
        await a.table("nodes").clear()
        assert await settles(b, live, body) == []
        assert live.patched == 1, live.patched
        await a.table("nodes").add({"id": "X001", "threadId": "X", "seq": 1})
        rows = await settles(b, live, body)
        assert len(rows) == 1 and live.patched == 2, live.patched


async def case_a_rerun_may_answer_a_whole_transaction_without_a_request(ctx: Ctx) -> None:
    """A querier of two transactions: the one whose table did not change asks nothing."""
    a, b = await two(ctx)
    await a.table("nodes").bulk_put(seed("X", 3))

    async def querier() -> list[Any]:
        nodes = await b.transaction("r", "nodes", nodes_of("X"))
        others = await b.transaction("r", "other", lambda tx: tx.table("other").to_list())
        return [*nodes, *others]

    async def fresh_both(tx: Transaction) -> list[Any]:
        return [*await nodes_of("X")(tx), *await tx.table("other").to_list()]

    with LiveQuery(b.feed, querier) as live:
        await settles(b, live, fresh_both)
        await a.table("other").put({"id": "o1"})
        rows = await settles(b, live, fresh_both)
        assert len(rows) == 4 and (live.served, live.patched) == (1, 1)
        await a.table("nodes").put({"id": "X001", "threadId": "X", "seq": 1, "text": "e"})
        rows = await settles(b, live, fresh_both)
        assert rows[1]["text"] == "e" and (live.served, live.patched) == (2, 2)


async def case_a_record_that_gains_a_blob_is_read_and_the_result_not_kept(ctx: Ctx) -> None:
    """A kept result is marshal bytes, which cannot hold a Blob: delivered, then not kept."""
    a, b = await two(ctx)
    await a.table("nodes").bulk_put(seed("X", 3))
    body = nodes_of("X")
    with b.live_query(body) as live:
        await settles(b, live, body)
        blob = make_blob(a, b"attached", "text/plain")
        await a.table("nodes").put({"id": "X001", "threadId": "X", "seq": 1, "file": blob})
        rows = await result_where(live, lambda r: "file" in r[1])
        assert is_blob(rows[1]["file"]) and await blob_bytes(rows[1]["file"]) == b"attached"
        assert live.patched == 1, live.patched
        await a.table("nodes").put({"id": "X002", "threadId": "X", "seq": 2, "text": "e"})
        rows = await result_where(live, lambda r: r[2].get("text") == "e")
        assert is_blob(rows[1]["file"])
        assert live.patched == 1, "a result holding a Blob was kept and patched"
