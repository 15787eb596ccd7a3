"""Integrity on load (docs/tree.md, Integrity repair): corruption written into the tables."""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from panelot.store import PanelotStore


async def _linear(store: PanelotStore, n: int = 4) -> tuple[str, list[str]]:
    tid = await store.create_thread("corrupt")
    ids = []
    for i in range(n):
        kind, payload = (
            ("user_message", text(f"m{i}"))
            if i % 2 == 0
            else ("assistant_message", answer(f"m{i}"))
        )
        ids.append((await store.append(tid, kind, payload))["nodeId"])
    return tid, ids


async def _raw(store: PanelotStore, node_id: str) -> Any:
    return await store.db.table("nodes").get(node_id)


async def _assert_repaired(store: PanelotStore, tid: str, expect_leaf_parent: str | None) -> None:
    report = await store.query("thread.check", {"threadId": tid})
    assert not report["ok"] and report["problems"], report
    snap = await store.snapshot(tid)  # repairs on load
    last = snap["nodes"][-1]
    assert last["type"] == "system_notice" and last["payload"]["code"] == "integrity_repair"
    assert last["parentId"] == expect_leaf_parent
    meta = await store.query("thread.get", {"threadId": tid})
    assert meta["leafId"] == last["id"]
    again = await store.snapshot(tid)  # already repaired: no second notice
    assert [n["id"] for n in again["nodes"]] == [n["id"] for n in snap["nodes"]]
    ctx_out = await store.context(tid)
    assert all(m["role"] != "system" for m in ctx_out["messages"])


async def case_missing_leaf_falls_back_to_newest_reachable_leaf(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _linear(store)
    await store.db.table("threads").update(tid, {"leafId": "ghost"})
    await _assert_repaired(store, tid, ids[-1])


async def case_dangling_parent(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _linear(store)
    await store.db.table("nodes").update(ids[2], {"parentId": "ghost"})
    # leaf m3 -> m2 -> ghost: broken; the newest leaf reaching a root is m1 (now childless)
    await _assert_repaired(store, tid, ids[1])


async def case_cycle_never_hangs(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _linear(store, 6)
    await store.db.table("nodes").update(ids[1], {"parentId": ids[4]})
    # m5 -> m4 -> m3 -> m2 -> m1 -> m4 loops; the root m0, now childless, is the only sound leaf
    await _assert_repaired(store, tid, ids[0])


async def case_parent_in_another_thread(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _linear(store)
    other, other_ids = await _linear(store, 2)
    await store.db.table("nodes").update(ids[2], {"parentId": other_ids[0]})
    report = await store.query("thread.check", {"threadId": tid})
    assert any("another thread" in p for p in report["problems"]), report
    await _assert_repaired(store, tid, ids[1])


async def case_malformed_and_unknown_nodes_are_reported_not_raised(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _linear(store)
    await store.db.table("nodes").put(
        {
            "id": "weird",
            "threadId": tid,
            "parentId": ids[-1],
            "seq": "x",
            "type": 7,
            "payload": None,
        }
    )
    await store.db.table("nodes").put(
        {
            "id": "alien",
            "threadId": tid,
            "parentId": ids[-1],
            "seq": 99,
            "ts": 1,
            "type": "martian",
            "payload": {"zap": 1},
        }
    )
    report = await store.query("thread.check", {"threadId": tid})
    assert any("weird" in p for p in report["problems"])
    snap = await store.snapshot(tid)
    assert [n["id"] for n in snap["nodes"]][:4] == ids
    out = await store.context(tid)
    assert len(out["messages"]) == 4


async def case_leaf_null_with_nodes_is_repaired(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _linear(store)
    await store.db.table("threads").update(tid, {"leafId": None})
    await _assert_repaired(store, tid, ids[-1])


async def case_a_node_without_parent_id_reads_as_a_root(ctx: Ctx) -> None:
    """Another writer may leave ``parentId`` out instead of writing null: a root."""
    store = await ctx.store()
    tid = await store.create_thread("no parent field")
    await store.db.table("nodes").put(
        {
            "id": "n1",
            "threadId": tid,
            "seq": 1,
            "ts": 1,
            "type": "user_message",
            "payload": {"content": [{"type": "text", "text": "hi"}]},
        }
    )
    thread = await store.db.table("threads").get(tid)
    await store.db.table("threads").put({**thread, "leafId": "n1"})
    context = await store.context(tid)
    assert context["path"] == ["n1"]
    assert [m["role"] for m in context["messages"]] == ["user"]
    snapshot = await store.snapshot(tid)
    assert [n["id"] for n in snapshot["nodes"]] == ["n1"] and snapshot["nodes"][0][
        "parentId"
    ] is None
