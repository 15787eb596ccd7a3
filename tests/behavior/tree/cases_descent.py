"""Branch switches with long descents (panelot.tree.descent), checked against a reference.

After ``LEVELS_BY_QUERY`` levels the descent reads the later nodes' links at once and
walks them in memory. These cases check that it lands where a descent asking for each
level's children lands: on random trees, and on corrupt records the one read misses.
"""

from __future__ import annotations

import random
from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from panelot.store import PanelotStore
from panelot.tree.descent import LEVELS_BY_QUERY
from panelot.tree.integrity import seq_order


def _answer(i: int) -> tuple[str, dict[str, Any]]:
    return "assistant_message", answer(f"a{i}")


async def _records(store: PanelotStore, tid: str) -> list[dict[str, Any]]:
    return await store.db.table("nodes").where("threadId").equals(tid).to_list()  # type: ignore[no-any-return]


def _reference(records: list[dict[str, Any]], start: str) -> str:
    """The deepest newest descendant, one level at a time over every record."""
    current, seen = start, {start}
    while True:
        kids = sorted((r for r in records if r.get("parentId") == current), key=seq_order)
        if not kids or kids[-1]["id"] in seen:
            return current
        current = kids[-1]["id"]
        seen.add(current)


def _depth(records: list[dict[str, Any]], node_id: str) -> int:
    parents = {r["id"]: r.get("parentId") for r in records}
    depth, current = 0, parents.get(node_id)
    while current is not None:
        depth, current = depth + 1, parents.get(current)
    return depth


async def _switch(store: PanelotStore, tid: str, node_id: str) -> str:
    out = await store.command("branch.switch", {"threadId": tid, "nodeId": node_id})
    leaf = (await store.query("thread.get", {"threadId": tid}))["leafId"]
    assert out["leafId"] == leaf
    return str(leaf)


async def _chain(store: PanelotStore, tid: str, length: int) -> list[str]:
    ids: list[str] = []
    for i in range(length):
        kind, payload = ("user_message", text(f"m{i}")) if i % 2 == 0 else _answer(i)
        ids.append((await store.append(tid, kind, payload))["nodeId"])
    return ids


async def case_long_descents_land_where_level_by_level_does(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("random tree")
    rng = random.Random(8)
    ids: list[str] = []
    for i in range(90):  # mostly extend the newest node, now and then branch off an older one
        parent = None if not ids else ids[-1] if rng.random() < 0.75 else rng.choice(ids)
        kind, payload = ("user_message", text(f"n{i}")) if i % 2 == 0 else _answer(i)
        ids.append((await store.append(tid, kind, payload, parentId=parent))["nodeId"])
    records = await _records(store, tid)
    starts = [ids[0], *rng.sample(ids, 24)]
    deep = [s for s in starts if _depth(records, _reference(records, s)) - _depth(records, s)]
    assert max(_depth(records, _reference(records, s)) - _depth(records, s) for s in deep) > (
        2 * LEVELS_BY_QUERY
    )  # some descents are long enough for the read at once
    for start in starts:
        assert await _switch(store, tid, start) == _reference(records, start), start


async def case_descent_finds_a_child_the_one_read_misses(ctx: Ctx) -> None:
    # A child stored with a lower seq than its parent (corrupt) is not in the read of
    # later nodes; the last node is still asked for its children, and the descent goes on.
    store = await ctx.store()
    tid = await store.create_thread("corrupt seq")
    ids = await _chain(store, tid, LEVELS_BY_QUERY + 6)
    nodes = store.db.table("nodes")
    last = await nodes.get(ids[-1])
    low = {**last, "id": "low-seq-child", "parentId": ids[-1], "seq": 1}
    below = {**last, "id": "under-low", "parentId": "low-seq-child", "seq": 2}
    await nodes.bulk_put([low, below])
    records = await _records(store, tid)
    assert _reference(records, ids[0]) == "under-low"
    assert await _switch(store, tid, ids[0]) == "under-low"


async def case_descent_in_memory_stops_at_a_loop(ctx: Ctx) -> None:
    # The start's stored parent is its own descendant, and it has the highest seq: the
    # walk over the later nodes meets it again and stops there instead of looping.
    store = await ctx.store()
    tid = await store.create_thread("loop")
    ids = await _chain(store, tid, LEVELS_BY_QUERY + 5)
    nodes = store.db.table("nodes")
    first = await nodes.get(ids[0])
    await nodes.put({**first, "parentId": ids[-1], "seq": 999})
    records = await _records(store, tid)
    assert _reference(records, ids[0]) == ids[-1]
    assert await _switch(store, tid, ids[0]) == ids[-1]
