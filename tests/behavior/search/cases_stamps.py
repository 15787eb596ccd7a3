"""A thread doc's stamp stays the thread's exact node count, and turns do not count it whole.

The stamp is what start-up's catch-up compares with ``panelot_v1``: a stamp off by one
node would index the thread again at every start. Batches keep it from a tally (the
count and the highest seq when counted, :mod:`panelot.search.tally`) plus the nodes
appended since; these cases check the stamp against a full count after every kind of
write, and that only the writes the tally cannot follow make the indexer count whole.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from behavior.search.cases_index import settled
from panelot.search.indexer import Indexer
from panelot.store import PanelotStore


def indexer(store: PanelotStore) -> Indexer:
    """The store's indexer."""
    assert store.search is not None
    return store.search


async def stamp_is_exact(store: PanelotStore, tid: str) -> None:
    """Wait for the index; its stamp of ``tid`` must hold the stored node count."""
    await settled(store)
    head = await indexer(store).index.table("docs").get(f"thread:{tid}")
    count = await store.db.table("nodes").where("threadId").equals(tid).count()
    assert isinstance(head, dict) and head["stamp"]["nodes"] == count, (head, count)


async def wholes_after(store: PanelotStore, tid: str, write: Any) -> int:
    """How many whole counts ``write`` (awaited) made; the stamp is checked after it."""
    before = indexer(store).tallies.whole
    await write
    await stamp_is_exact(store, tid)
    return indexer(store).tallies.whole - before


async def case_turns_keep_the_stamp_exact_without_counting_whole(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Stamps")
    u = await store.append(tid, "user_message", text("first question"))
    await stamp_is_exact(store, tid)  # a catch-up (start-up, a wide batch) forgets tallies
    await store.append(tid, "assistant_message", answer("first answer"))
    await stamp_is_exact(store, tid)
    assert indexer(store).tallies.get(tid) is not None  # counted once, kept
    edits: list[Any] = [
        store.append(tid, "user_message", text("second question")),
        store.append(
            tid, "tool_call", {"itemId": "i1", "toolName": "t", "params": {}, "level": "L1"}
        ),
        store.command(
            "message.regenerate",
            {"threadId": tid, "userNodeId": u["nodeId"], "payload": answer("again")},
        ),
        store.command(
            "message.edit", {"threadId": tid, "nodeId": u["nodeId"], "payload": text("q'")}
        ),
        store.command("message.delete", {"threadId": tid, "nodeId": u["nodeId"]}),
    ]
    for edit in edits:
        assert await wholes_after(store, tid, edit) == 0


async def case_writes_the_tally_cannot_follow_are_counted_whole(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("Raw writes")
    other = await store.create_thread("Elsewhere")
    first = await store.append(tid, "user_message", text("kept question"))
    await store.append(tid, "assistant_message", answer("kept answer"))
    await store.append(other, "user_message", text("other thread"))
    await stamp_is_exact(store, tid)
    await stamp_is_exact(store, other)
    nodes = store.db.table("nodes")
    base = {"threadId": tid, "parentId": first["nodeId"], "ts": ctx.now, "payload": {}}
    # Written as Dexie code might: below the top seq, without a seq, removed, moved.
    low = {**base, "id": "raw-low", "seq": 1.5, "type": "tool_call"}
    assert await wholes_after(store, tid, nodes.put(low)) == 1
    unnumbered = {**base, "id": "raw-unnumbered", "type": "tool_call"}
    assert await wholes_after(store, tid, nodes.put(unnumbered)) == 1
    # A node gone without a doc names no thread: no stamp is written for it, and every
    # tally is forgotten, so the thread's next write counts it whole (or start-up does).
    await nodes.delete("raw-low")
    await settled(store)
    assert indexer(store).tallies.get(tid) is None
    assert await wholes_after(store, tid, store.append(tid, "user_message", text("after"))) == 1
    moved = store.db.table("nodes").update(first["nodeId"], {"threadId": other})
    assert await wholes_after(store, tid, moved) >= 1
    await stamp_is_exact(store, other)
    # And an append after them is followed without a whole count again.
    assert await wholes_after(store, tid, store.append(tid, "user_message", text("later"))) == 0
