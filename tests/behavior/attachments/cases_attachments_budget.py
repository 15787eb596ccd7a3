"""The attachment budget: eviction order, the active thread, two steps, start-up cleanup."""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.attachments.cases_attachments import image, interrupted_eviction, put
from panelot.attachments.eviction import evict
from panelot.idb.blobs import make_blob
from panelot.idb.errors import NotFoundError
from panelot.store import PanelotStore


async def _scene(store: PanelotStore) -> dict[str, Any]:
    """Threads A and B; 1000-byte images B1, A1, B2, B3 (oldest first), each in a node."""
    a, b = await store.create_thread("A"), await store.create_thread("B")
    ids: dict[str, str] = {}
    nodes: dict[str, str] = {}
    for name, tid in (("B1", b), ("A1", a), ("B2", b), ("B3", b)):
        ids[name] = await put(store, tid, name.encode() * 500)
        node = await store.append(tid, "user_message", image(ids[name], f"{name}.png"))
        nodes[name] = node["nodeId"]
    return {"a": a, "b": b, "ids": ids, "nodes": nodes}


async def _live(store: PanelotStore) -> list[str]:
    rows = (await store.query("attachment.list", {}))["attachments"]
    return [r["id"] for r in rows]


async def case_evicts_oldest_first_skipping_the_active_thread(ctx: Ctx) -> None:
    store = await ctx.store()
    s = await _scene(store)
    ids = s["ids"]
    out = await store.command("attachment.evict", {"budget": 2500, "activeThreadId": s["a"]})
    # 4000 bytes: B1 goes (3000), A1 is active, B2 goes (2000 <= 2500); B3 stays.
    assert out == {"evicted": 2, "freed": 2000, "total": 2000}
    assert await _live(store) == [ids["A1"], ids["B3"]]
    await raises(NotFoundError, store.query("attachment.get", {"attachmentId": ids["B1"]}))
    node = await store.db.table("nodes").get(s["nodes"]["B1"])
    assert node["payload"]["content"][0]["evicted"] is True
    kept = await store.db.table("nodes").get(s["nodes"]["B3"])
    assert "evicted" not in kept["payload"]["content"][0]
    # the UI snapshot and the model context show it as evicted, without failing
    snap = await store.query("thread.snapshot", {"threadId": s["b"]})
    states = [n["payload"]["content"][0].get("state") for n in snap["nodes"]]
    assert states == ["evicted", "evicted", None], states
    context = await store.context(s["b"])
    first = context["messages"][0]["content"][0]
    assert first["type"] == "text" and first["evicted"] is True and "B1.png" in first["text"]
    resolved = (await store.query("attachment.resolve", {"threadId": s["b"]}))["attachments"]
    assert list(resolved) == [ids["B3"]]
    markdown = (await store.query("thread.export", {"threadId": s["b"], "format": "markdown"}))[
        "markdown"
    ]
    assert "(evicted)" in markdown
    # within budget: nothing more to do
    again = await store.command("attachment.evict", {"budget": 2500, "activeThreadId": s["a"]})
    assert again == {"evicted": 0, "freed": 0, "total": 2000}


async def case_the_active_thread_alone_may_exceed_the_budget(ctx: Ctx) -> None:
    store = await ctx.store()
    s = await _scene(store)
    out = await evict(store.db, 0, s["b"])
    assert out["evicted"] == 1 and out["total"] == 3000
    assert await _live(store) == [s["ids"][k] for k in ("B1", "B2", "B3")]


async def case_put_makes_room_within_the_budget(ctx: Ctx) -> None:
    store = await ctx.store()
    storage = store.host.storage
    old = storage.budget
    storage.set_budget(2500)
    try:
        s = await _scene(store)
        # each put evicted first, sparing the thread it writes to
        assert (await store.query("attachment.usage", {}))["total"] <= 2500 + 1000
        await put(store, s["a"], b"z" * 1000)
        usage = await store.query("attachment.usage", {})
        assert usage["total"] <= 2500 and usage["budget"] == 2500
    finally:
        storage.set_budget(old)


async def case_eviction_interrupted_between_steps_finishes_at_start_up(ctx: Ctx) -> None:
    store = await ctx.store()
    s = await _scene(store)
    await interrupted_eviction(store, 1000, s["a"])
    rows = await store.db.table("attachments").to_list()
    marked = sorted(r["id"] for r in rows if r.get("deleting"))
    assert marked == sorted([s["ids"]["B1"], s["ids"]["B2"], s["ids"]["B3"]])
    assert await _live(store) == [s["ids"]["A1"]]  # marked records are invisible already
    for name in ("B1", "B2", "B3"):
        node = await store.db.table("nodes").get(s["nodes"][name])
        assert node["payload"]["content"][0]["evicted"] is True
    # "kill": drop this connection and open the database again, as a new context would
    name = store.db.name
    store.close()
    reopened = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.dbs.append(reopened.db)
    assert reopened.startup["finished"] == 3
    rows = await reopened.db.table("attachments").to_list()
    assert [r["id"] for r in rows] == [s["ids"]["A1"]] and not rows[0].get("deleting")
    check = await reopened.query("thread.check", {"threadId": s["b"]})
    assert check["ok"], check


async def case_start_up_cleanup_marks_nodes_of_foreign_deleting_records(ctx: Ctx) -> None:
    store = await ctx.store()
    s = await _scene(store)
    # a record marked deleting by other code, its node never marked
    await store.db.table("attachments").update(s["ids"]["B2"], {"deleting": True})
    name = store.db.name
    store.close()
    reopened = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.dbs.append(reopened.db)
    assert reopened.startup["finished"] == 1
    node = await reopened.db.table("nodes").get(s["nodes"]["B2"])
    assert node["payload"]["content"][0]["evicted"] is True
    assert await reopened.db.table("attachments").get(s["ids"]["B2"]) is None


async def case_budget_counts_records_without_a_size_field(ctx: Ctx) -> None:
    """A record written by other code (no ``size``) counts by its Blob's size."""
    store = await ctx.store()
    s = await _scene(store)
    foreign = {
        "id": "dexie-written",
        "threadId": s["b"],
        "createdAt": 1,  # the oldest of all
        "kind": "file",
        "mime": "application/octet-stream",
        "bytes": make_blob(store.db, b"z" * 700, "application/octet-stream"),
    }
    await store.db.table("attachments").put(foreign)
    usage = await store.query("attachment.usage", {})
    assert (usage["total"], usage["count"]) == (4700, 5)
    out = await store.command("attachment.evict", {"budget": 4000, "activeThreadId": s["a"]})
    assert out == {"evicted": 1, "freed": 700, "total": 4000}, out
    assert await store.db.table("attachments").get("dexie-written") is None
