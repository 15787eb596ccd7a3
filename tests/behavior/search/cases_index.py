"""``search.*``: the index database follows ``panelot_v1`` and no hit is ever false.

Each case waits for the state that proves the indexer caught up (``search.status``
says it no longer lags), never for a guessed time.
"""

from __future__ import annotations

import asyncio
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer, text
from behavior.waiting import result_where
from panelot.idb.errors import ValidationError
from panelot.search.schema import FORMAT
from panelot.store import PanelotStore


async def settled(store: PanelotStore, timeout: float = 10.0) -> dict[str, Any]:
    """Wait until the index holds everything heard so far; return ``search.status``."""
    loop = asyncio.get_event_loop()
    deadline = loop.time() + timeout
    while True:
        status: dict[str, Any] = await store.query("search.status")
        if not status["lagging"] and status["format"] == FORMAT:
            return status
        if loop.time() > deadline:
            raise AssertionError(f"the index still lags after {timeout:g} s: {status}")
        await asyncio.sleep(0.01)


async def find(store: PanelotStore, words: str, **args: Any) -> dict[str, Any]:
    """``search.messages`` for ``words``."""
    found: dict[str, Any] = await store.query("search.messages", {"text": words, **args})
    return found


def node_ids(found: dict[str, Any]) -> list[Any]:
    """The node ids of a result's hits."""
    return [hit["nodeId"] for hit in found["hits"]]


async def case_an_appended_message_becomes_findable(ctx: Ctx) -> None:
    store = await ctx.store()
    await settled(store)
    tid = await store.create_thread("Dinner ideas", tags=["cooking"])
    user = await store.append(tid, "user_message", text("What goes well with lamb?"))
    reply = await store.append(
        tid, "assistant_message", answer("The recipe with Sumac, café style")
    )
    await store.append(tid, "user_message", text("Спасибо, очень вкусно. 这个食谱很好"))
    await settled(store)
    found = await find(store, "sumac")
    assert node_ids(found) == [reply["nodeId"]], found
    hit = found["hits"][0]
    assert hit["threadId"] == tid and hit["title"] == "Dinner ideas" and hit["onVisibleBranch"]
    start, end = hit["highlights"][0]
    assert hit["snippet"][start:end] == "Sumac"
    assert node_ids(await find(store, "CAFE recipe")) == [reply["nodeId"]]  # case, accents
    assert node_ids(await find(store, "reci")) == [reply["nodeId"]]  # the last word, a prefix
    assert node_ids(await find(store, '"with sumac"')) == [reply["nodeId"]]
    assert node_ids(await find(store, '"sumac with"')) == []
    assert node_ids(await find(store, "lamb")) == [user["nodeId"]]
    assert len(node_ids(await find(store, "вкусно"))) == 1
    assert len(node_ids(await find(store, "食谱"))) == 1
    titled = await find(store, "dinner")
    assert [(h["threadId"], h["nodeId"]) for h in titled["hits"]] == [(tid, None)]
    assert node_ids(await find(store, "cooking")) == [None]  # tags are the thread's


async def case_tombstones_deleted_threads_and_raw_deletes_never_show(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Kept")
    gone = await store.create_thread("Doomed")
    a = await store.append(tid, "user_message", text("zebra one"))
    b = await store.append(tid, "assistant_message", answer("zebra two"))
    c = await store.append(gone, "user_message", text("zebra three"))
    await settled(store)
    assert sorted(node_ids(await find(store, "zebra"))) == sorted(
        [a["nodeId"], b["nodeId"], c["nodeId"]]
    )
    assert store.search is not None
    async with store.search.paused():  # no batch runs: the index still holds all three
        await store.command("message.delete", {"threadId": tid, "nodeId": b["nodeId"]})
        await store.db.table("nodes").delete(a["nodeId"])  # Dexie-style, no command
        await store.command("thread.delete", {"threadId": gone})
        assert (await store.query("search.status"))["lagging"]
        assert node_ids(await find(store, "zebra")) == []
        assert (await find(store, "doomed"))["hits"] == []
    await settled(store)
    assert node_ids(await find(store, "zebra")) == []
    assert (await find(store, "doomed"))["hits"] == []
    status = await store.query("search.status")
    assert status["docs"] == 1, status  # only "Kept"'s title is left


async def case_filters_and_archived_threads(ctx: Ctx) -> None:
    store = await ctx.store()
    work = await store.create_thread("W", folderId="work", tags=["q3"])
    home = await store.create_thread("H")
    await store.append(work, "user_message", text("budget review"))
    await store.append(home, "user_message", text("budget for groceries"))
    await store.command("thread.update", {"threadId": home, "patch": {"archived": True}})
    await settled(store)
    assert [h["threadId"] for h in (await find(store, "budget"))["hits"]] == [work]
    archived = await find(store, "budget", filters={"archived": True})
    assert [h["threadId"] for h in archived["hits"]] == [home]
    assert (await find(store, "budget", filters={"folder": "home"}))["hits"] == []
    assert len((await find(store, "budget", filters={"folder": "work", "tag": "q3"}))["hits"]) == 1
    assert (await find(store, "budget", filters={"from": 10**15}))["hits"] == []
    await raises(
        ValidationError, store.query("search.messages", {"text": "x", "filters": {"no": 1}})
    )


async def case_bad_input_gets_a_clear_answer(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    await store.append(tid, "user_message", text("plain words"))
    await settled(store)
    for empty in ("", "   ", "?!.,;", '""'):
        assert await find(store, empty) == {"hits": [], "total": 0}
    for odd in (".*[(", "\ud800 words", "a" * 999):
        assert isinstance((await find(store, odd))["hits"], list)
    error = await raises(ValidationError, find(store, "x" * 1001))
    assert getattr(error, "field", None) == "text"
    await raises(ValidationError, find(store, "x", limit=0))
    await raises(ValidationError, find(store, "x", limit=101))


async def case_rebuild_after_the_index_database_is_deleted(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    node = await store.append(tid, "user_message", text("saffron rice"))
    await settled(store)
    assert store.search is not None
    await ctx.factory.delete(store.search.index.name)
    await find(store, "saffron")  # may miss while it rebuilds; it starts the rebuild
    await settled(store)
    assert node_ids(await find(store, "saffron")) == [node["nodeId"]]
    rebuilt = await store.command("search.rebuild", {})
    assert rebuilt == {"threads": 1, "docs": 2}, rebuilt
    assert node_ids(await find(store, "saffron")) == [node["nodeId"]]


async def case_catch_up_after_writes_made_while_closed(ctx: Ctx) -> None:
    store = await ctx.store()
    name = store.db.name
    tid = await store.create_thread("T")
    old = await store.append(tid, "user_message", text("walnut old"))
    await store.append(tid, "user_message", text("walnut older"))
    await settled(store)
    store.close()
    # Another context writes while no indexer runs.
    blind = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock, search=False)
    new = await blind.append(tid, "user_message", text("walnut new"))
    await blind.command("message.delete", {"threadId": tid, "nodeId": old["nodeId"]})
    other = await blind.create_thread("Pistachio")
    blind.close()
    again = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.stores.append(again)
    await settled(again)
    found = node_ids(await find(again, "walnut"))
    assert new["nodeId"] in found and old["nodeId"] not in found and len(found) == 2, found
    assert [h["threadId"] for h in (await find(again, "pistachio"))["hits"]] == [other]


async def case_a_live_search_updates_when_the_indexer_commits(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    await settled(store)
    with store.live("search.messages", {"text": "quince"}) as live:
        assert (await result_where(live, lambda r: True))["total"] == 0
        node = await store.append(tid, "user_message", text("quince jam"))
        found = await result_where(live, lambda r: r["total"] == 1, timeout=10)
        assert node_ids(found) == [node["nodeId"]]
        await store.command("message.delete", {"threadId": tid, "nodeId": node["nodeId"]})
        await result_where(live, lambda r: r["total"] == 0, timeout=10)


async def case_records_written_directly_are_indexed(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    first = await store.append(tid, "user_message", text("hello"))
    node = {
        "id": "raw-1",
        "threadId": tid,
        "parentId": first["nodeId"],
        "seq": 99,
        "ts": ctx.now,
        "type": "assistant_message",
        "payload": answer("a kumquat written by Dexie code"),
    }
    await store.db.table("nodes").put(node)  # no command: as Dexie code would
    await settled(store)
    found = await find(store, "kumquat")
    assert node_ids(found) == ["raw-1"] and found["hits"][0]["onVisibleBranch"] is False
    await store.db.table("threads").update(tid, {"title": "Renamed directly"})
    await settled(store)
    assert [h["threadId"] for h in (await find(store, "renamed"))["hits"]] == [tid]


async def case_a_damaged_index_is_rebuilt_by_itself(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    node = await store.append(tid, "user_message", text("juniper berries"))
    await settled(store)
    assert store.search is not None
    await store.search.index.table("meta").put({"key": "format", "value": "junk"})
    await store.search.index.table("postings").delete("juniper")
    assert (await store.query("search.status"))["format"] == "junk"
    await settled(store)
    assert node_ids(await find(store, "juniper")) == [node["nodeId"]]


async def case_a_restore_rebuilds_the_index(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("T")
    kept = await store.append(tid, "user_message", text("fennel kept"))
    backup = await store.export_backup(settings=False)
    await store.append(tid, "user_message", text("fennel after the backup"))
    await settled(store)
    assert len(node_ids(await find(store, "fennel"))) == 2
    restored = await store.restore_backup(backup.file, settings=False)
    assert restored["status"] == "completed", restored
    await settled(store)
    assert node_ids(await find(store, "fennel")) == [kept["nodeId"]]


async def case_a_kill_during_indexing_is_caught_up_after_restart(ctx: Ctx) -> None:
    store = await ctx.store()
    name = store.db.name
    tid = await store.create_thread("T")
    await store.append(tid, "user_message", text("tamarind first"))
    await settled(store)
    assert store.search is not None
    async with store.search.paused():  # heard, never indexed: the context dies first
        late = await store.append(tid, "assistant_message", answer("tamarind late"))
        assert (await store.query("search.status"))["lagging"]
        store.close()
    again = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.stores.append(again)
    await settled(again)
    assert late["nodeId"] in node_ids(await find(again, "tamarind late"))
    assert len(node_ids(await find(again, "tamarind"))) == 2


async def case_two_contexts_each_with_an_indexer_stay_true(ctx: Ctx) -> None:
    panel = await ctx.store()
    other = await PanelotStore.open(ctx.factory, ctx.host, panel.db.name, clock=ctx.clock)
    ctx.stores.append(other)  # a second panel: its own connections and its own indexer
    tid = await panel.create_thread("Shared")
    await settled(panel)
    with panel.live("search.messages", {"text": "persimmon"}) as live:
        assert (await result_where(live, lambda r: True))["total"] == 0
        node = await other.append(tid, "user_message", text("persimmon from the other panel"))
        found = await result_where(live, lambda r: r["total"] == 1, timeout=10)
        assert node_ids(found) == [node["nodeId"]]
        await other.command("message.delete", {"threadId": tid, "nodeId": node["nodeId"]})
        await result_where(live, lambda r: r["total"] == 0, timeout=10)
    await settled(panel)
    await settled(other)
    for store in (panel, other):
        assert (await find(store, "persimmon"))["hits"] == []
        assert (await store.query("search.status"))["docs"] == 1  # the title only
