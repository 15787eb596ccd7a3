"""``search.messages``' fast paths give what reading everything gave, query after query.

The query remembers the hit threads' shape (:mod:`panelot.search.branch`) and the terms
of the texts it checked (:mod:`panelot.search.memo`): these cases change the tree and
the texts between queries, with commands and with direct writes, and check that each
answer is the one the current records give (and, for the branch, that the memo served).
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from behavior.search.cases_index import find, settled
from behavior.waiting import result_where
from panelot.search.branch import branch_memo


def visible(found: dict[str, Any]) -> dict[Any, bool]:
    """``{nodeId: onVisibleBranch}`` of a result's hits."""
    return {hit["nodeId"]: hit["onVisibleBranch"] for hit in found["hits"]}


async def case_on_visible_branch_follows_the_tree_between_queries(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Grove")
    a = (await store.append(tid, "user_message", text("olive one")))["nodeId"]
    b = (await store.append(tid, "assistant_message", answer("olive two")))["nodeId"]
    await settled(store)
    memo = branch_memo(store.db)
    assert visible(await find(store, "olive")) == {a: True, b: True}
    assert visible(await find(store, "olive")) == {a: True, b: True}
    assert memo.hits >= 1  # the second query walked the remembered shape
    c = (await store.append(tid, "user_message", text("olive three"), parentId=a))["nodeId"]
    await settled(store)
    assert visible(await find(store, "olive")) == {a: True, b: False, c: True}
    await store.command("branch.switch", {"threadId": tid, "nodeId": b})
    assert visible(await find(store, "olive")) == {a: True, b: True, c: False}
    await store.command("branch.switch", {"threadId": tid, "nodeId": c})
    assert visible(await find(store, "olive")) == {a: True, b: False, c: True}
    hits = memo.hits
    # The same nodes, one parent changed directly (as Dexie code would): the keys are
    # the same, so only the change feed can tell the remembered shape is stale.
    moved = await store.db.table("nodes").get(c)
    await store.db.table("nodes").put({**moved, "parentId": b})
    assert visible(await find(store, "olive")) == {a: True, b: True, c: True}
    raw = await store.db.table("nodes").get(a)
    await store.db.table("nodes").delete(a)  # a node gone: the feed drops the entry
    await settled(store)
    assert visible(await find(store, "olive")) == {b: True, c: True}
    await store.db.table("nodes").put(raw)
    await settled(store)
    assert visible(await find(store, "olive")) == {a: True, b: True, c: True}
    assert visible(await find(store, "olive")) == {a: True, b: True, c: True}
    assert memo.hits > hits


async def case_a_live_search_hears_a_parent_changed_directly(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Jar")
    a = (await store.append(tid, "user_message", text("caper one")))["nodeId"]
    b = (await store.append(tid, "assistant_message", answer("caper two")))["nodeId"]
    x = (await store.append(tid, "user_message", text("plain words"), parentId=a))["nodeId"]
    c = (await store.append(tid, "assistant_message", answer("caper three")))["nodeId"]
    await settled(store)
    assert visible(await find(store, "caper")) == {a: True, b: False, c: True}
    with store.live("search.messages", {"text": "caper"}) as live:
        first = await result_where(live, lambda r: len(r["hits"]) == 3)
        assert visible(first) == {a: True, b: False, c: True}
        # x is no hit (never verified) and the indexer waits: only what the query
        # records of the thread's nodes can wake the live search when x moves under b.
        assert store.search is not None
        async with store.search.paused():
            node = await store.db.table("nodes").get(x)
            await store.db.table("nodes").put({**node, "parentId": b})
            found = await result_where(live, lambda r: visible(r).get(b) is True, timeout=10)
            assert visible(found) == {a: True, b: True, c: True}


async def case_a_text_changed_in_place_is_checked_as_it_is_now(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    node = await store.append(tid, "user_message", text("the saffron rice, then the saffron tea"))
    nid = node["nodeId"]
    await settled(store)
    assert [h["nodeId"] for h in (await find(store, '"saffron rice"'))["hits"]] == [nid]
    assert [h["nodeId"] for h in (await find(store, "saffron"))["hits"]] == [nid]
    record = await store.db.table("nodes").get(nid)
    changed = {**record, "payload": text("the saffron tea, no rice")}
    assert store.search is not None
    async with store.search.paused():  # the index still says "saffron rice": the text decides
        await store.db.table("nodes").put(changed)
        assert (await find(store, '"saffron rice"'))["hits"] == []
        hits = (await find(store, "saffron"))["hits"]
        assert [h["nodeId"] for h in hits] == [nid] and "no rice" in hits[0]["snippet"]
    await settled(store)
    assert (await find(store, '"saffron rice"'))["hits"] == []


async def case_a_filtered_search_follows_nodes_and_threads_between_queries(ctx: Ctx) -> None:
    store = await ctx.store()
    home = await store.create_thread("Home")
    away = await store.create_thread("Away")
    await store.db.table("threads").update(home, {"folderId": "f1"})
    await store.db.table("threads").update(away, {"folderId": "f2"})
    moved = (await store.append(home, "user_message", text("quince moved")))["nodeId"]
    stays = (await store.append(home, "user_message", text("quince stays")))["nodeId"]
    await settled(store)

    async def in_folder(folder: str) -> list[Any]:
        found = await find(store, "quince ", filters={"folder": folder})
        return sorted(hit["nodeId"] for hit in found["hits"])

    assert await in_folder("f2") == []
    assert await in_folder("f2") == []  # now the query knows both nodes' thread
    assert await in_folder("f1") == sorted([moved, stays])
    record = await store.db.table("nodes").get(moved)
    await store.db.table("nodes").put({**record, "threadId": away, "parentId": None})
    await settled(store)
    assert await in_folder("f2") == [moved]
    assert await in_folder("f1") == [stays]
    await store.db.table("threads").update(home, {"folderId": "f2"})
    await settled(store)
    assert await in_folder("f2") == sorted([moved, stays])
    assert await in_folder("f1") == []
    with store.live("search.messages", {"text": "quince ", "filters": {"folder": "f1"}}) as live:
        assert (await result_where(live, lambda r: True))["hits"] == []
        record = await store.db.table("nodes").get(stays)
        await store.db.table("nodes").put({**record, "threadId": away, "parentId": None})
        await store.db.table("threads").update(away, {"folderId": "f1"})
        found = await result_where(live, lambda r: len(r["hits"]) == 2, timeout=10)
        assert sorted(hit["nodeId"] for hit in found["hits"]) == sorted([moved, stays])


async def case_a_live_search_hears_a_node_it_did_not_read(ctx: Ctx) -> None:
    store = await ctx.store()
    here = await store.create_thread("Here")
    there = await store.create_thread("There")
    await store.db.table("threads").update(here, {"folderId": "f1"})
    await store.db.table("threads").update(there, {"folderId": "f2"})
    node = (await store.append(there, "user_message", text("medlar jelly")))["nodeId"]
    await settled(store)
    args = {"text": "medlar ", "filters": {"folder": "f1"}}
    assert (await store.query("search.messages", args))["hits"] == []
    assert (await store.query("search.messages", args))["hits"] == []  # not read: its thread
    with store.live("search.messages", args) as live:
        assert (await result_where(live, lambda r: True))["hits"] == []
        assert store.search is not None
        async with store.search.paused():  # only the node's own change can wake it
            record = await store.db.table("nodes").get(node)
            await store.db.table("nodes").put({**record, "threadId": here, "parentId": None})
            found = await result_where(live, lambda r: len(r["hits"]) == 1, timeout=10)
            assert found["hits"][0]["nodeId"] == node
