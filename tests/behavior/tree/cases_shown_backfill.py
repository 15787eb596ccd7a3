"""``thread.count_shown``: counts ``shown`` for threads without counts that hold.

Records written before ``shown`` existed, or whose leaf other code moved, list without a
count; the command counts their visible path (compared here with the full snapshot),
the newest first, ``limit`` per call, and answers how many remain. It re-reads each
thread in its read-write transaction: a thread whose leaf moved after it was counted is
skipped, and counts another command wrote meanwhile are kept.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.payloads import answer
from behavior.tree.cases_shown import _check, _expected, _listed, _reply, _say
from panelot.idb import Transaction
from panelot.idb.errors import ValidationError
from panelot.store import PanelotStore
from panelot.tree.backfill import count_unheld, write_counted


async def _strip(store: PanelotStore, tid: str) -> None:
    """Write the thread's record as one written before ``shown`` existed."""
    raw = await store.db.table("threads").get(tid)
    await store.db.table("threads").put({k: v for k, v in raw.items() if k != "shown"})
    assert "shown" not in await store.db.table("threads").get(tid)
    assert "shown" not in await _listed(store, tid)


async def _count(store: PanelotStore, limit: int | None = None) -> dict[str, Any]:
    payload = {} if limit is None else {"limit": limit}
    result: dict[str, Any] = await store.command("thread.count_shown", payload)
    return result


async def _chat(store: PanelotStore, title: str, turns: int) -> tuple[str, list[str]]:
    """A thread of ``turns`` questions and answers; returns its id and the user nodes."""
    tid = await store.create_thread(title)
    users = []
    for n in range(turns):
        users.append(await _say(store, tid, f"{title} q{n}"))
        await _reply(store, tid, f"{title} a{n}")
    return tid, users


async def case_count_shown_counts_threads_without_counts_that_hold(ctx: Ctx) -> None:
    store = await ctx.store()
    # A chat with a regenerated reply and its first question deleted: 1 turn, 3 messages.
    plain, users = await _chat(store, "plain", 2)
    regen = {"threadId": plain, "userNodeId": users[1], "payload": answer("again")}
    await store.command("message.regenerate", regen)
    await store.command("message.delete", {"threadId": plain, "nodeId": users[0]})
    await _check(store, plain, 1, 3)
    # A thread whose leaf other code moved up (its counts no longer hold), an empty one,
    # and a thread being deleted (left alone).
    moved, moved_users = await _chat(store, "moved", 3)
    await store.db.table("threads").update(moved, {"leafId": moved_users[1]})
    empty = await store.create_thread("empty")
    held, _ = await _chat(store, "held", 1)
    dying, _ = await _chat(store, "dying", 1)
    for tid in (plain, empty, dying):
        await _strip(store, tid)
    await store.db.table("threads").update(dying, {"deleting": True})
    before = {tid: (await _listed(store, tid))["updatedAt"] for tid in (plain, moved, empty)}

    assert await _count(store) == {"counted": 3, "remaining": 0}
    await _check(store, plain, 1, 3)
    await _check(store, moved, 2, 3)  # user, reply, the second user message as leaf
    await _check(store, empty, 0, 0)
    await _check(store, held, 1, 2)
    assert "shown" not in await store.db.table("threads").get(dying)
    for tid, updated in before.items():  # the list keeps its order
        assert (await _listed(store, tid))["updatedAt"] == updated
    assert await _count(store) == {"counted": 0, "remaining": 0}
    # The next command that moves the leaf starts from the counts written.
    await _say(store, plain, "three")
    await _check(store, plain, 2, 4)


async def _write(store: PanelotStore, counted: Any) -> int:
    """The command's second step, in a read-write transaction: threads written."""

    async def body(tx: Transaction) -> int:
        writes = await write_counted(tx, counted)
        await tx.gather(*writes)
        return len(writes)

    written: int = await store.db.transaction("rw", ["threads"], body)
    return written


async def case_count_shown_never_overwrites_a_leaf_or_counts_written_meanwhile(ctx: Ctx) -> None:
    store = await ctx.store()
    still, _ = await _chat(store, "still", 2)
    by_dexie, dexie_users = await _chat(store, "dexie", 2)
    by_us, _ = await _chat(store, "us", 2)
    same_leaf, same_users = await _chat(store, "same leaf", 2)
    for tid in (still, by_dexie, by_us, same_leaf):
        await _strip(store, tid)
    counted = await count_unheld(store.db, 20)
    assert counted.unheld == 4
    assert {tid for tid, _ in counted.counts} == {still, by_dexie, by_us, same_leaf}
    # Between the count and the write: other code moves a leaf (counts still missing),
    # a command moves another (and counts it), a third keeps its leaf but drops a
    # message (and counts it): the counts read earlier are stale for all three.
    await store.db.table("threads").update(by_dexie, {"leafId": dexie_users[0]})
    await _say(store, by_us, "more")
    await store.command("message.delete", {"threadId": same_leaf, "nodeId": same_users[0]})
    stale = dict(counted.counts)[same_leaf]
    assert (stale.turns, stale.messages) == (2, 4)

    assert await _write(store, counted) == 1  # only the thread nothing touched
    await _check(store, still, 2, 4)
    assert "shown" not in await _listed(store, by_dexie)
    assert "shown" not in await store.db.table("threads").get(by_dexie)
    await _check(store, by_us, 3, 5)
    await _check(store, same_leaf, 1, 3)
    # The thread skipped is counted by the next call, from its leaf as it is now.
    assert await _count(store) == {"counted": 1, "remaining": 0}
    await _check(store, by_dexie, 1, 1)


async def case_count_shown_takes_the_newest_first_limit_at_a_time(ctx: Ctx) -> None:
    store = await ctx.store()
    tids = [(await _chat(store, f"t{n}", 1))[0] for n in range(5)]  # t4 is the newest
    for tid in tids:
        await _strip(store, tid)
    assert await _count(store, 2) == {"counted": 2, "remaining": 3}
    counted = [tid for tid in tids if "shown" in await _listed(store, tid)]
    assert counted == tids[3:]
    assert await _count(store, 2) == {"counted": 2, "remaining": 1}
    assert await _count(store, 100) == {"counted": 1, "remaining": 0}
    for tid in tids:
        want = await _expected(store, tid)
        assert (await _listed(store, tid))["shown"] == want
        assert (want["turns"], want["messages"]) == (1, 2)


async def case_count_shown_refuses_a_bad_limit(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, _ = await _chat(store, "t", 1)
    await _strip(store, tid)
    for bad in (0, -1, 101, True, "5", 1.5):
        exc = await raises(ValidationError, store.command("thread.count_shown", {"limit": bad}))
        assert getattr(exc, "field", None) == "payload.limit", (bad, exc)
    assert "shown" not in await _listed(store, tid)  # a refused call wrote nothing
    # An explicit null is the default batch.
    assert await store.command("thread.count_shown", {"limit": None}) == {
        "counted": 1,
        "remaining": 0,
    }
