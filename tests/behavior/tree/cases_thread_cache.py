"""The thread cache: a view of a thread it holds reads only what is new, and stays true.

Store A reads views of a thread (context, snapshot, request) through its cache; store
B, a second connection (another context on the browser core), writes. Every view A
returns is compared with the same view read by a third connection whose cache is
cleared before each read: what the database holds now. The cache's ``hits`` and
``misses`` show which reads it served.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from behavior.waiting import until
from panelot.idb import Transaction
from panelot.idb.observe import RangeSet
from panelot.idb.observe.changes import part_name
from panelot.store import PanelotStore
from panelot.tree.cache import ThreadCache, thread_cache
from panelot.tree.nodes import TREE_TABLES


class Trio:
    """A (reads through its cache), B (writes), C (reads the database afresh)."""

    def __init__(self, a: PanelotStore, b: PanelotStore, c: PanelotStore) -> None:
        self.a, self.b, self.c = a, b, c
        self.cache: ThreadCache = thread_cache(a.db)
        self.seen: list[Any] = []
        a.db.feed.subscribe(self.seen.append)

    async def check(self, tid: str) -> dict[str, Any]:
        """A's context, snapshot and request equal C's fresh ones; return A's context."""
        got = await self.a.context(tid)
        thread_cache(self.c.db).clear()
        assert got == await self.c.context(tid)
        thread_cache(self.c.db).clear()
        assert await self.a.snapshot(tid) == await self.c.snapshot(tid)
        thread_cache(self.c.db).clear()
        assert await self.a.request_context(tid) == await self.c.request_context(tid)
        return got

    async def heard(self, write: Awaitable[Any], node: str | None = None) -> Any:
        """Run ``write``; wait until A's feed has announced its change of node ``node``.

        ``node`` defaults to the ``nodeId`` that ``write`` returns (an append's).
        """
        self.seen.clear()
        out = await write
        node_id = node if node is not None else out["nodeId"]
        part = part_name(self.a.db.name, "nodes", "")
        await until(
            lambda: any(part in s and s[part].has_key(node_id) for s in self.seen),
            what=f"the change of node {node_id!r}",
        )
        return out


async def _trio(ctx: Ctx) -> Trio:
    a = await ctx.store()
    b = await PanelotStore.open(ctx.factory, ctx.host, a.db.name, clock=ctx.clock)
    c = await PanelotStore.open(ctx.factory, ctx.host, a.db.name, clock=ctx.clock)
    ctx.dbs += [b.db, c.db]
    return Trio(a, b, c)


async def _turns(store: PanelotStore, tid: str, count: int) -> list[str]:
    ids = []
    for n in range(count):
        ids.append((await store.append(tid, "user_message", text(f"q{n}")))["nodeId"])
        ids.append((await store.append(tid, "assistant_message", answer(f"a{n}")))["nodeId"])
    return ids


async def case_appends_are_read_on_top_of_the_cached_records(ctx: Ctx) -> None:
    t = await _trio(ctx)
    tid = await t.a.create_thread("cached")
    await _turns(t.a, tid, 5)
    await t.check(tid)
    misses = t.cache.misses
    assert t.cache.threads == [tid]
    # This context's turn, then another context's: each read takes only the new nodes.
    mine = await _turns(t.a, tid, 1)
    got = await t.check(tid)
    assert got["path"][-2:] == mine
    theirs = await _turns(t.b, tid, 1)
    last = await t.heard(t.b.append(tid, "user_message", text("more")))
    got = await t.check(tid)
    assert got["path"][-3:] == [*theirs, last["nodeId"]]
    assert t.cache.misses == misses, "an append made the cache read the whole thread again"
    assert t.cache.hits >= 6


async def case_a_change_to_a_cached_node_anywhere_is_seen(ctx: Ctx) -> None:
    t = await _trio(ctx)
    tid = await t.a.create_thread("changed")
    ids = await _turns(t.a, tid, 3)
    await t.check(tid)
    # Another context deletes an answer (a tombstone: the node is rewritten).
    await t.heard(t.b.command("message.delete", {"threadId": tid, "nodeId": ids[1]}), ids[1])
    got = await t.check(tid)
    assert ids[1] not in got["path"]
    # A record rewritten by plain Dexie-style code in another context.
    await t.heard(t.b.db.table("nodes").update(ids[2], {"payload": text("rewritten")}), ids[2])
    got = await t.check(tid)
    assert got["messages"][1]["content"][0]["text"] == "rewritten"


async def case_a_node_added_below_the_top_reads_the_thread_again(ctx: Ctx) -> None:
    t = await _trio(ctx)
    tid = await t.a.create_thread("below")
    ids = await _turns(t.a, tid, 2)
    await t.check(tid)
    misses = t.cache.misses
    # Another context adds a version of the first answer with a seq among the cached
    # ones and moves the leaf to it: only the feed says that the thread has a new node.
    node = await t.b.db.table("nodes").get(ids[1])
    node = {**node, "id": "odd-version", "seq": 2.5, "payload": answer("odd")}
    await t.b.db.table("threads").update(tid, {"leafId": "odd-version"})
    await t.heard(t.b.db.table("nodes").put(node), "odd-version")
    got = await t.check(tid)
    assert got["path"] == [ids[0], "odd-version"]
    assert t.cache.misses > misses


async def case_other_threads_changes_keep_the_entry(ctx: Ctx) -> None:
    t = await _trio(ctx)
    tid = await t.a.create_thread("kept")
    other = await t.a.create_thread("other")
    await _turns(t.a, tid, 2)
    await t.check(tid)
    misses = t.cache.misses
    theirs = await _turns(t.b, other, 2)
    delete = t.b.command("message.delete", {"threadId": other, "nodeId": theirs[1]})
    await t.heard(delete, theirs[1])
    await t.check(tid)
    assert t.cache.misses == misses, "another thread's writes dropped the entry"


async def case_a_wide_change_drops_every_entry(ctx: Ctx) -> None:
    t = await _trio(ctx)
    tid = await t.a.create_thread("wide")
    await _turns(t.a, tid, 2)
    await t.check(tid)
    assert t.cache.threads == [tid]
    await t.b.db.table("nodes").clear()  # a change named by a range, not by keys
    await until(lambda: not t.cache.threads, what="the entry dropped")
    got = await t.check(tid)
    assert got["messages"] == []


async def case_changing_a_returned_view_does_not_change_the_next(ctx: Ctx) -> None:
    t = await _trio(ctx)
    tid = await t.a.create_thread("own copy")
    await _turns(t.a, tid, 2)
    first = await t.a.context(tid)
    first["messages"][0]["content"][0]["text"] = "scribbled"
    first["messages"].clear()
    snap = await t.a.snapshot(tid)
    snap["nodes"][0]["payload"]["content"].append({"type": "text", "text": "more"})
    again = await t.check(tid)
    assert again["messages"][0]["content"] == [{"type": "text", "text": "q0"}]
    assert t.cache.hits >= 2


async def case_a_connection_that_does_not_observe_reads_without_the_cache(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("unobserved")
    ids = await _turns(store, tid, 2)
    await store.context(tid)
    store.db.observe = False  # its own commits are no longer announced, even to itself
    await store.command("message.delete", {"threadId": tid, "nodeId": ids[1]})
    assert ids[1] not in (await store.context(tid))["path"]
    assert thread_cache(store.db).threads == []


async def case_a_thread_is_kept_from_its_second_read(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("twice")
    await _turns(store, tid, 2)
    cache = thread_cache(store.db)
    await store.context(tid)
    assert cache.threads == [], "a one-off read was kept"
    await store.markdown(tid)
    assert cache.threads == [tid]
    hits = cache.hits
    await store.snapshot(tid)
    assert cache.hits == hits + 1


async def case_a_model_request_keeps_the_thread_from_its_first_read(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("a turn")
    await _turns(store, tid, 2)
    cache = thread_cache(store.db)
    await store.request_context(tid)
    assert cache.threads == [tid], "a turn's request was not kept for the next turn"
    hits, misses = cache.hits, cache.misses
    await _turns(store, tid, 1)
    await store.request_context(tid)
    assert (cache.hits, cache.misses) == (hits + 1, misses)


async def case_a_change_heard_during_a_cached_read_is_not_lost(ctx: Ctx) -> None:
    """Another context's commit, announced while a cached read runs, makes it read afresh."""
    t = await _trio(ctx)
    tid = await t.a.create_thread("race")
    ids = await _turns(t.a, tid, 2)
    await t.check(tid)
    assert t.cache.threads == [tid]
    # B rewrites a held node without announcing it; the announcement is then delivered
    # to A while A's cached read is under way (as one from another page arrives late).
    t.b.db.observe = False
    await t.b.db.table("nodes").update(ids[0], {"payload": text("changed before the read")})
    name = t.a.db.name
    changes = {
        part_name(name, "nodes", ""): RangeSet().add_key(ids[0]),
        part_name(name, "nodes", "threadId"): RangeSet().add_key(tid),
    }

    # Heard between the cached read's first reads and its decision (on the browser core
    # any await may let it in; the memory core runs a transaction without yielding).
    original = t.cache._tail

    async def hear_then_tail(*args: Any) -> Any:
        t.a.db.feed.received_set(changes)
        return await original(*args)

    t.cache._tail = hear_then_tail  # type: ignore[method-assign]

    async def body(tx: Transaction) -> list[Any]:
        _, rows = await t.cache.records(tx, tid)
        return rows

    rows = await t.a.db.transaction("r", TREE_TABLES, body)
    t.cache._tail = original  # type: ignore[method-assign]
    first = next(row for row in rows if row["id"] == ids[0])
    assert first["payload"]["content"][0]["text"] == "changed before the read"
    got = await t.check(tid)
    assert got["messages"][0]["content"][0]["text"] == "changed before the read"


async def case_the_request_lends_the_cached_records_and_returns_copies(ctx: Ctx) -> None:
    """``thread.request`` reads the cache's own records and sizes; what it returns is a copy."""
    t = await _trio(ctx)
    tid = await t.a.create_thread("lent")
    await _turns(t.a, tid, 6)
    budget = 120  # a few of these short turns: the cut and the node sizes matter

    async def same() -> dict[str, Any]:
        got = await t.a.request_context(tid, context_budget=budget)
        thread_cache(t.c.db).clear()
        assert got == await t.c.request_context(tid, context_budget=budget)
        return got

    await t.check(tid)
    first = await same()
    assert first["history"]["droppedNodes"] > 0
    hits = t.cache.hits
    # Scribbling on a returned request changes neither the cache nor the next request.
    first["messages"][0]["content"][0]["text"] = "scribbled"
    first["messages"][-1]["content"].clear()
    again = await same()
    assert again["messages"][0]["content"][0]["text"] != "scribbled"
    assert t.cache.hits > hits
    # Appends from either context, read by views that copy and by the request in turn.
    await _turns(t.a, tid, 2)
    await t.check(tid)
    await same()
    last = await t.heard(t.b.append(tid, "user_message", text("theirs")))
    got = await same()
    assert got["path"][-1] == last["nodeId"]
    # A rewritten node changes its size: the memo goes with the entry.
    node = last["nodeId"]
    await t.heard(t.b.db.table("nodes").update(node, {"payload": text("x" * 500)}), node)
    rewritten = await same()
    assert rewritten["path"] == [node]  # alone over the budget: the newest turn only
    assert rewritten["history"] != got["history"]


async def case_the_request_follows_branches_and_tombstones(ctx: Ctx) -> None:
    """The request's kept index and path (tree.path_memo) follow every move of the leaf."""
    t = await _trio(ctx)
    tid = await t.a.create_thread("moves")
    ids = await _turns(t.a, tid, 4)

    async def same(budget: int | None = None) -> dict[str, Any]:
        got = await t.a.request_context(tid, context_budget=budget)
        thread_cache(t.c.db).clear()
        assert got == await t.c.request_context(tid, context_budget=budget)
        return got

    await t.check(tid)
    assert (await same())["path"] == ids
    regen = {"threadId": tid, "userNodeId": ids[-2], "payload": answer("again")}
    again = (await t.a.command("message.regenerate", regen))["nodeId"]
    assert (await same())["path"] == [*ids[:-1], again]
    await t.a.command("branch.switch", {"threadId": tid, "nodeId": ids[-1]})
    assert (await same())["path"] == ids
    edit = {"threadId": tid, "nodeId": ids[2], "payload": text("q1 edited")}
    edited = (await t.a.command("message.edit", edit))["nodeId"]
    assert (await same())["path"] == [*ids[:2], edited]
    more = await _turns(t.b, tid, 2)
    await t.heard(t.b.append(tid, "user_message", text("theirs")))
    got = await same()
    assert got["path"][-2] == more[-1]
    cut = await same(60)
    assert cut["path"] == got["path"][-len(cut["path"]) :]
    await t.heard(t.b.command("message.delete", {"threadId": tid, "nodeId": ids[1]}), ids[1])
    whole = await same()
    assert ids[1] not in whole["path"] and whole["path"][0] == ids[0]
    await t.a.command("branch.switch", {"threadId": tid, "nodeId": ids[-1]})
    assert (await same())["path"] == [ids[0], *ids[2:]]


async def case_only_the_threads_read_last_keep_records_to_lend(ctx: Ctx) -> None:
    t = await _trio(ctx)
    tids = [await t.a.create_thread(f"t{i}") for i in range(3)]
    for tid in tids:
        await _turns(t.a, tid, 2)
        await t.check(tid)  # read twice: kept, and lent to the request
    assert t.cache.threads == tids
    assert t.cache.lending == tids[1:]
    # The first thread is lent again (a new turn read on top), the second stops lending.
    await _turns(t.a, tids[0], 1)
    got = await t.a.request_context(tids[0], context_budget=50)
    thread_cache(t.c.db).clear()
    assert got == await t.c.request_context(tids[0], context_budget=50)
    assert t.cache.lending == [tids[2], tids[0]]
