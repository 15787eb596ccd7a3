"""Eviction of many attachments at once (step 1 reads them with one ranged query)."""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.attachments.cases_attachments import image, interrupted_eviction, put
from panelot.attachments.eviction import FEW_IDS, evict, mark_for_eviction
from panelot.idb import Transaction
from panelot.idb.blobs import make_blob
from panelot.store import PanelotStore

COUNT = FEW_IDS * 2 + 3
"""Attachments per scene: well over the few read by key."""


async def _scene(store: PanelotStore) -> dict[str, Any]:
    """Threads A (active) and B, C; ``COUNT`` 100-byte images, each in its own node."""
    tids = [await store.create_thread(name) for name in ("A", "B", "C")]
    ids: list[str] = []
    nodes: list[str] = []
    for i in range(COUNT):
        tid = tids[i % 3]
        aid = await put(store, tid, bytes([i]) * 100, meta={"title": f"img {i}"}, trust="trusted")
        ids.append(aid)
        node = await store.append(tid, "user_message", image(aid, f"{i}.png"))
        nodes.append(node["nodeId"])
    return {"tids": tids, "ids": ids, "nodes": nodes}


async def _evicted_flags(store: PanelotStore, nodes: list[str]) -> list[bool]:
    rows = await store.db.table("nodes").bulk_get(nodes)
    return [r["payload"]["content"][0].get("evicted") is True for r in rows]


async def case_evicting_many_marks_every_node_and_spares_the_rest(ctx: Ctx) -> None:
    store = await ctx.store()
    s = await _scene(store)
    active = s["tids"][0]
    out = await store.command("attachment.evict", {"budget": 0, "activeThreadId": active})
    victims = [i for i in range(COUNT) if i % 3 != 0]
    assert out == {
        "evicted": len(victims),
        "freed": 100 * len(victims),
        "total": 100 * (COUNT - len(victims)),
    }
    left = await store.db.table("attachments").to_list()
    assert sorted(r["id"] for r in left) == sorted(s["ids"][i] for i in range(0, COUNT, 3))
    # the active thread's records, inside the victims' id range, are untouched
    assert all(not r.get("deleting") and r["size"] == 100 for r in left)
    flags = await _evicted_flags(store, s["nodes"])
    assert flags == [i % 3 != 0 for i in range(COUNT)], flags
    check = await store.query("thread.check", {"threadId": s["tids"][1]})
    assert check["ok"], check


async def case_evicting_spares_every_named_thread(ctx: Ctx) -> None:
    store = await ctx.store()
    s = await _scene(store)
    active, spared, other = s["tids"]
    out = await store.command(
        "attachment.evict", {"budget": 0, "activeThreadId": active, "sparedThreadIds": [spared]}
    )
    victims = [i for i in range(COUNT) if i % 3 == 2]
    assert out["evicted"] == len(victims) and out["freed"] == 100 * len(victims), out
    left = await store.db.table("attachments").to_list()
    assert sorted(r["id"] for r in left) == sorted(
        s["ids"][i] for i in range(COUNT) if i % 3 != 2
    ), other
    assert await _evicted_flags(store, s["nodes"]) == [i % 3 == 2 for i in range(COUNT)]


async def case_many_tombstones_keep_the_metadata_without_the_blob(ctx: Ctx) -> None:
    store = await ctx.store()
    s = await _scene(store)
    before = {r["id"]: r for r in await store.db.table("attachments").to_list()}
    await interrupted_eviction(store, 0, s["tids"][0])
    victims = {s["ids"][i] for i in range(COUNT) if i % 3 != 0}
    for row in await store.db.table("attachments").to_list():
        if row["id"] in victims:
            expected = {**before[row["id"]], "deleting": True, "bytes": None}
            assert row == expected, row
        else:
            assert row["bytes"] is not None and not row.get("deleting")

    # step 1 is idempotent: running it again (unknown ids included) changes nothing
    async def again(tx: Transaction) -> dict[str, int]:
        return await mark_for_eviction(tx, [*sorted(victims), "no-such-id"])

    assert await store.db.transaction("rw", ["nodes", "attachments"], again) == {
        "attachments": len(victims),
        "nodes": 0,
    }
    name = store.db.name
    store.close()
    reopened = await PanelotStore.open(ctx.factory, ctx.host, name, clock=ctx.clock)
    ctx.dbs.append(reopened.db)
    assert reopened.startup["finished"] == len(victims)
    assert await _evicted_flags(reopened, s["nodes"]) == [i % 3 != 0 for i in range(COUNT)]
    assert (await evict(reopened.db, 0, s["tids"][0]))["evicted"] == 0


async def case_many_victims_count_records_without_a_size_by_their_blob(ctx: Ctx) -> None:
    """Records written by other code (no ``size``) among many victims: freed counts their Blob."""
    store = await ctx.store()
    s = await _scene(store)
    table = store.db.table("attachments")
    for n in range(2):
        await table.put(
            {
                "id": f"dexie-{n}",
                "threadId": s["tids"][1],
                "createdAt": n,  # the oldest of all
                "kind": "file",
                "mime": "application/octet-stream",
                "bytes": make_blob(store.db, b"z" * 700, "application/octet-stream"),
            }
        )
    out = await store.command("attachment.evict", {"budget": 0, "activeThreadId": s["tids"][0]})
    victims = [i for i in range(COUNT) if i % 3 != 0]
    assert out["evicted"] == len(victims) + 2, out
    assert out["freed"] == 100 * len(victims) + 1400, out
    assert await table.get("dexie-0") is None and await table.get("dexie-1") is None
