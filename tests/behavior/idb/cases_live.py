"""Live queries and the change feed between two connections (two contexts).

On the memory core the second connection hears the first through its factory; on the
browser core through Dexie's ``x-storagemutated-1`` event, as another context on the
page would. Each case waits for the state its own action produces: a result holding
the new value, or the feed of the second connection having received the N sets the
first one published.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from behavior import Ctx
from behavior.waiting import result_where, until
from panelot.idb import Database, ReadOnlyError, Transaction
from panelot.idb.observe import LiveQuery, ObsSet

STORES = {"nodes": "id, threadId, [threadId+seq]", "other": "id"}


class Probe:
    """Records the change sets a connection's feed receives."""

    def __init__(self, db: Database) -> None:
        self.name = db.name
        self.seen: list[ObsSet] = []
        self.stop = db.feed.subscribe(self.seen.append)

    def saw(self, table: str, key: Any) -> bool:
        """True once a received set announces primary key ``key`` of ``table``."""
        part = f"idb://{self.name}/{table}/"
        return any(part in s and s[part].has_key(key) for s in self.seen)

    async def wait(self, table: str, key: Any, timeout: float = 5.0) -> None:
        """Wait until a set announcing ``key`` of ``table`` has arrived."""
        await until(lambda: self.saw(table, key), timeout, f"the change of {table} {key!r}")


async def two(ctx: Ctx) -> tuple[Database, Database]:
    a = await ctx.open(STORES)
    b = await ctx.open(STORES, name=a.name)
    return a, b


def thread_nodes(thread: str) -> Callable[[Transaction], Any]:
    async def body(tx: Transaction) -> list[Any]:
        return await tx.table("nodes").where("threadId").equals(thread).to_list()

    return body


async def case_live_query_sees_another_connections_commit(ctx: Ctx) -> None:
    a, b = await two(ctx)
    with b.live_query(thread_nodes("X")) as live:
        assert await result_where(live, lambda r: True) == []
        await a.table("nodes").put({"id": "n1", "threadId": "X", "seq": 1})
        rows = await result_where(live, lambda r: len(r) == 1)
        assert rows == [{"id": "n1", "threadId": "X", "seq": 1}]
        await a.table("nodes").put({"id": "n1", "threadId": "X", "seq": 1, "text": "edited"})
        rows = await result_where(live, lambda r: r and r[0].get("text") == "edited")
        await a.table("nodes").delete("n1")
        assert await result_where(live, lambda r: r == []) == []


async def case_live_query_sees_its_own_connections_commit(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    with db.live_query(thread_nodes("X")) as live:
        await result_where(live, lambda r: r == [])
        await db.table("nodes").bulk_put(
            [{"id": f"n{i}", "threadId": "X", "seq": i} for i in range(3)]
        )
        rows = await result_where(live, lambda r: len(r) == 3)
        assert [r["id"] for r in rows] == ["n0", "n1", "n2"]


async def case_unrelated_writes_do_not_rerun(ctx: Ctx) -> None:
    a, b = await two(ctx)
    probe = Probe(b)
    await a.table("nodes").bulk_put(
        [
            {"id": "x1", "threadId": "X", "seq": 1},
            {"id": "y1", "threadId": "Y", "seq": 1},
        ]
    )
    await probe.wait("nodes", "y1")  # the set-up's own change, before the query starts
    with b.live_query(thread_nodes("X")) as live:
        await result_where(live, lambda r: [n["id"] for n in r] == ["x1"])
        assert live.runs == 1
        # Another thread's nodes (new, edited, deleted), another table: none touches X.
        await a.table("nodes").put({"id": "y2", "threadId": "Y", "seq": 2})
        await a.table("nodes").put({"id": "y1", "threadId": "Y", "seq": 1, "text": "e"})
        await a.table("nodes").delete("y2")
        await a.table("other").put({"id": "o"})
        await a.table("nodes").add({"id": "z1", "threadId": "Z", "seq": 1})
        await probe.wait("nodes", "z1")
        await asyncio.sleep(0.1)  # longer than the coalescing interval: a re-run would start
        assert live.runs == 1, f"re-ran {live.runs - 1} times on unrelated writes"
        await a.table("nodes").add({"id": "x2", "threadId": "X", "seq": 2})
        await result_where(live, lambda r: len(r) == 2)
        assert live.runs == 2


async def case_a_lone_change_reruns_at_once_and_a_burst_waits_a_gap(ctx: Ctx) -> None:
    """The gap holds back the changes of a burst, never a change after a quiet spell."""
    a, b = await two(ctx)
    gap = 2.0  # the interval: no run within it of the previous one, inside a burst
    with b.live_query(thread_nodes("X"), interval=gap) as live:
        await result_where(live, lambda r: r == [])
        # A lone change right after the first run: it re-runs at once, not a gap later.
        await a.table("nodes").put({"id": "x1", "threadId": "X", "seq": 1})
        await result_where(live, lambda r: len(r) == 1, timeout=gap / 2)
        assert live.runs == 2
        # A change within a gap of the last one is a burst: held back, then run once.
        await a.table("nodes").put({"id": "x2", "threadId": "X", "seq": 2})
        await a.table("nodes").put({"id": "x3", "threadId": "X", "seq": 3})
        await asyncio.sleep(gap / 4)
        assert live.runs == 2, "a change of a burst re-ran the query within the gap"
        await result_where(live, lambda r: len(r) == 3, timeout=gap * 3)
        assert live.runs == 3


async def case_index_range_precision(ctx: Ctx) -> None:
    a, b = await two(ctx)
    probe = Probe(b)

    async def window(tx: Transaction) -> list[Any]:
        nodes = tx.table("nodes")
        return await nodes.where("[threadId+seq]").between(["X", 10], ["X", 20]).to_list()

    with b.live_query(window, "nodes") as live:
        await result_where(live, lambda r: r == [])
        await a.table("nodes").add({"id": "a", "threadId": "X", "seq": 5})
        await a.table("nodes").add({"id": "b", "threadId": "X", "seq": 25})
        await probe.wait("nodes", "b")
        await asyncio.sleep(0.1)
        assert live.runs == 1
        await a.table("nodes").add({"id": "c", "threadId": "X", "seq": 15})
        rows = await result_where(live, lambda r: len(r) == 1)
        assert rows[0]["id"] == "c"
        # Moving a record out of the range (it was in the result) re-runs it.
        await a.table("nodes").put({"id": "c", "threadId": "X", "seq": 30})
        assert await result_where(live, lambda r: r == []) == []


async def case_aborted_transaction_publishes_nothing(ctx: Ctx) -> None:
    a, b = await two(ctx)
    probe = Probe(b)

    async def failing(tx: Transaction) -> None:
        await tx.table("nodes").put({"id": "lost", "threadId": "X", "seq": 1})
        raise ValueError("the body fails after writing")

    try:
        await a.transaction("rw", ["nodes"], failing)
    except ValueError:
        pass
    else:
        raise AssertionError("the body's error was not raised")
    await a.table("other").put({"id": "kept"})
    await probe.wait("other", "kept")
    await asyncio.sleep(0.05)
    assert not probe.saw("nodes", "lost"), "an aborted transaction published its change"
    assert [p for s in probe.seen for p, r in s.items() if r] == [
        f"idb://{a.name}/other/",
        f"idb://{a.name}/other/:dels",
    ]
    assert await a.table("nodes").get("lost") is None


async def case_a_burst_of_commits_is_coalesced(ctx: Ctx) -> None:
    a, b = await two(ctx)
    with b.live_query(thread_nodes("X"), interval=0.05) as live:
        loop = asyncio.get_event_loop()
        await result_where(live, lambda r: r == [])
        started = loop.time()
        count = 200
        for i in range(count):
            await a.table("nodes").put({"id": "n", "threadId": "X", "seq": i})
        await result_where(live, lambda r: r and r[0]["seq"] == count - 1)
        elapsed = loop.time() - started
        reruns = live.runs - 1
        # At most one run per interval of the burst, plus the last: never one per commit.
        assert reruns <= elapsed / 0.05 + 2, (reruns, elapsed)
        assert reruns < count / 4, (reruns, count)


async def case_malformed_messages_are_ignored(ctx: Ctx) -> None:
    db = await ctx.open(STORES)
    with db.live_query(thread_nodes("X")) as live:
        await result_where(live, lambda r: r == [])
        junk: list[Any] = [
            None,
            42,
            "not json",
            "[1, 2]",
            '{"nodes": {"from": 1, "to": 2}}',
            '{"idb://x/nodes/": {"from": 2, "to": 1, "d": 1}}',
            '{"idb://x/nodes/": {"from": true, "to": 1, "d": 1}}',
            '{"idb://x/nodes/": 7}',
            "[" * 100_000 + "]" * 100_000,
        ]
        for message in junk:
            db.feed.received(message)
        assert db.feed.ignored == len(junk)
        assert live.runs == 1
        await db.table("nodes").put({"id": "n", "threadId": "X", "seq": 1})
        await result_where(live, lambda r: len(r) == 1)


async def case_close_leaves_no_listener(ctx: Ctx) -> None:
    a, b = await two(ctx)
    base = b.feed.listeners
    lives = [b.live_query(thread_nodes("X")) for _ in range(10)]
    assert b.feed.listeners == base + 10
    for live in lives:
        await result_where(live, lambda r: r == [])
        live.close()
    assert b.feed.listeners == base
    probe = Probe(b)
    await a.table("nodes").put({"id": "n", "threadId": "X", "seq": 1})
    await probe.wait("nodes", "n")
    await asyncio.sleep(0.1)
    assert all(live.runs == 1 for live in lives)
    async for _ in lives[0]:
        raise AssertionError("a closed live query yielded")


async def case_a_querier_may_not_write(ctx: Ctx) -> None:
    db = await ctx.open(STORES)

    async def writes(tx: Transaction) -> None:
        await tx.table("nodes").put({"id": "n", "threadId": "X", "seq": 1})

    errors: list[BaseException] = []
    querier = LiveQuery(
        db.feed, lambda: db.transaction("rw", ["nodes"], writes), on_error=errors.append
    )
    with querier:
        await until(lambda: bool(errors), what="the querier's error")
        assert isinstance(errors[0], ReadOnlyError)
        assert await db.table("nodes").get("n") is None


async def case_store_live_snapshot_follows_appends_elsewhere(ctx: Ctx) -> None:
    from panelot.store import PanelotStore

    a = await ctx.store()
    b = await PanelotStore.open(ctx.factory, ctx.host, a.db.name, clock=ctx.clock)
    ctx.dbs.append(b.db)
    probe = Probe(b.db)
    tid = await a.create_thread("watched")
    other = await a.create_thread("other")
    await probe.wait("threads", other)  # the set-up's own change, before the query starts
    with b.live("thread.snapshot", {"threadId": tid}) as live:
        await result_where(live, lambda s: s["nodes"] == [])
        runs = live.runs
        sent = await a.append(other, "user_message", {"content": [{"type": "text", "text": "x"}]})
        await probe.wait("nodes", sent["nodeId"])
        await asyncio.sleep(0.1)
        assert live.runs == runs, "another thread's append re-ran the snapshot"
        node = await a.append(tid, "user_message", {"content": [{"type": "text", "text": "hi"}]})
        snap = await result_where(live, lambda s: len(s["nodes"]) == 1)
        assert snap["nodes"][0]["id"] == node["nodeId"]


async def case_a_channel_timer_fires_once_and_never_after_close(ctx: Ctx) -> None:
    # The feed's frame timer is the channel's (a setTimeout through one proxy on the
    # browser core): it calls back once, after its delay, and not at all once closed.
    a, b = await two(ctx)
    fired: list[str] = []
    channel_a, channel_b = a.feed.channel, b.feed.channel
    assert channel_a is not None and channel_b is not None
    channel_a.later(0.01, lambda: fired.append("a"))
    channel_b.later(0.01, lambda: fired.append("b"))
    b.close()  # before its timer is due
    await until(lambda: fired == ["a"], 5.0, "the timer of the open channel")
    await asyncio.sleep(0.05)  # well past both delays
    assert fired == ["a"], fired


async def case_a_burst_tail_is_published_by_the_frame_timer(ctx: Ctx) -> None:
    # Commits of a burst (a's clock stands still, so each comes right after the
    # last): the first goes out at once, the others wait in the outbox for the
    # frame's timer. Nothing commits after the last one, so only a timer can send it;
    # the other connection hears every key.
    a, b = await two(ctx)
    probe = Probe(b)
    a.feed.clock = lambda: 1000.0
    published = a.feed.published
    for n in range(20):
        await a.table("nodes").put({"id": f"t{n}", "threadId": "T", "seq": n})
    assert not probe.saw("nodes", "t19"), "the burst's last commit did not wait"
    assert a.feed.published > published, "the burst's first commit went out at once"
    await probe.wait("nodes", "t19")
    assert all(probe.saw("nodes", f"t{n}") for n in range(20))
    assert a.feed.published >= published + 2
