"""The thread record's ``shown``: what the current branch shows, kept true by every command.

``thread.list`` and ``thread.get`` return ``shown = {leafId, turns, messages}`` (live user
messages, shown nodes of the visible path) while it holds for the thread's leaf; the
stored ``stats`` keep counting every assistant message ever written. Each case compares
``shown`` with the full snapshot after every step: appends, a regenerate, an edit, a
branch switch, deletes (a tool pair included), an import, and a leaf moved by other code.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from panelot.store import PanelotStore


async def _expected(store: PanelotStore, tid: str) -> dict[str, Any]:
    """The counts of the full snapshot: what the user sees."""
    snap = await store.snapshot(tid)
    nodes = snap["nodes"]
    turns = sum(1 for n in nodes if n["type"] == "user_message")
    return {"leafId": snap["leafId"], "turns": turns, "messages": len(nodes)}


async def _listed(store: PanelotStore, tid: str) -> dict[str, Any]:
    rows = [r for r in await store.query("thread.list", {"archived": None}) if r["id"] == tid]
    assert len(rows) == 1, rows
    return rows[0]


async def _check(store: PanelotStore, tid: str, turns: int, messages: int) -> None:
    """``shown`` in the list and in thread.get equals the snapshot's counts (and these)."""
    want = await _expected(store, tid)
    assert (want["turns"], want["messages"]) == (turns, messages), want
    assert (await _listed(store, tid))["shown"] == want
    assert (await store.query("thread.get", {"threadId": tid}))["shown"] == want


async def _say(store: PanelotStore, tid: str, words: str) -> str:
    return str((await store.append(tid, "user_message", text(words)))["nodeId"])


async def _reply(store: PanelotStore, tid: str, words: str) -> str:
    return str((await store.append(tid, "assistant_message", answer(words)))["nodeId"])


async def case_shown_counts_the_current_branch_through_regenerate_edit_switch(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    await _check(store, tid, 0, 0)
    u1 = await _say(store, tid, "one")
    await _check(store, tid, 1, 1)
    await _reply(store, tid, "r1")
    await _check(store, tid, 1, 2)
    u2 = await _say(store, tid, "two")
    a2 = await _reply(store, tid, "r2")
    await _check(store, tid, 2, 4)
    # Regenerating the last reply three times: still 2 turns, 4 messages shown...
    for n in range(3):
        payload = {"threadId": tid, "userNodeId": u2, "payload": answer(f"again {n}")}
        await store.command("message.regenerate", payload)
        await _check(store, tid, 2, 4)
    # ...while the stored statistics count every assistant message written.
    assert (await _listed(store, tid))["stats"]["turns"] == 5
    # Editing the first message starts a branch of one message.
    edit = {"threadId": tid, "nodeId": u1, "payload": text("one, edited")}
    await store.command("message.edit", edit)
    await _check(store, tid, 1, 1)
    await _reply(store, tid, "r1'")
    await _check(store, tid, 1, 2)
    # Back to the first version: its newest descendant is the last regenerated reply.
    await store.command("branch.switch", {"threadId": tid, "nodeId": u1})
    await _check(store, tid, 2, 4)
    # A switch to an older reply version keeps the counts; a switch up the tree too.
    await store.command("branch.switch", {"threadId": tid, "nodeId": a2})
    await _check(store, tid, 2, 4)
    await _say(store, tid, "three")
    await _check(store, tid, 3, 5)
    # Editing the second message: the branch holds the first exchange and the edit.
    await store.command("message.edit", {"threadId": tid, "nodeId": u2, "payload": text("2'")})
    await _check(store, tid, 2, 3)


async def case_shown_follows_deletes(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    u1 = await _say(store, tid, "one")
    a1 = await _reply(store, tid, "r1")
    await _say(store, tid, "two")
    call = {"itemId": "c1", "toolName": "read", "params": {}, "level": "L0"}
    tool = str((await store.append(tid, "tool_call", call))["nodeId"])
    result = {"itemId": "c1", "ok": True, "contentForLlm": [{"type": "text", "text": "ok"}]}
    await store.append(tid, "tool_result", result)
    last = await _reply(store, tid, "r2")
    await _check(store, tid, 2, 6)
    # Deleting the call tombstones its result too: two messages fewer.
    await store.command("message.delete", {"threadId": tid, "nodeId": tool})
    await _check(store, tid, 2, 4)
    # A message in the middle of the path: the leaf stays, the counts drop.
    await store.command("message.delete", {"threadId": tid, "nodeId": a1})
    await _check(store, tid, 2, 3)
    # The leaf itself: the leaf moves up to live content.
    await store.command("message.delete", {"threadId": tid, "nodeId": last})
    await _check(store, tid, 2, 2)
    await store.command("message.delete", {"threadId": tid, "nodeId": u1})
    await _check(store, tid, 1, 1)
    # A regenerated reply with a message below it deleted: the message below stands at
    # its place (tombstones are looked through).
    tid2 = await store.create_thread("t2")
    u = await _say(store, tid2, "q")
    await _reply(store, tid2, "first")
    regen = {"threadId": tid2, "userNodeId": u, "payload": answer("second")}
    second = (await store.command("message.regenerate", regen))["nodeId"]
    await _say(store, tid2, "more")
    await _check(store, tid2, 2, 3)
    await store.command("message.delete", {"threadId": tid2, "nodeId": second})
    await _check(store, tid2, 2, 2)


async def case_shown_of_an_import_and_of_a_leaf_moved_by_other_code(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    u = await _say(store, tid, "one")
    await _reply(store, tid, "r1")
    regen = {"threadId": tid, "userNodeId": u, "payload": answer("r1 again")}
    await store.command("message.regenerate", regen)
    await _say(store, tid, "two")
    await _check(store, tid, 2, 3)
    exported = (await store.query("thread.export", {"threadId": tid}))["data"]
    copy = (await store.command("thread.import", {"data": exported}))["threadId"]
    await _check(store, copy, 2, 3)
    assert (await _listed(store, copy))["shown"]["leafId"] != (await _listed(store, tid))["leafId"]
    # Other code moves the leaf without the counts: they no longer hold, so none is
    # returned; the next command that moves the leaf counts the path afresh.
    await store.db.table("threads").update(tid, {"leafId": u})
    assert "shown" not in await _listed(store, tid)
    assert "shown" not in await store.query("thread.get", {"threadId": tid})
    await _reply(store, tid, "r1, a third time")
    await _check(store, tid, 1, 2)
    # A record without them (written before they existed): the same.
    await store.db.table("threads").update(tid, {"shown": None})
    raw = await store.db.table("threads").get(tid)
    await store.db.table("threads").put({k: v for k, v in raw.items() if k != "shown"})
    assert "shown" not in await _listed(store, tid)
    await _say(store, tid, "again")
    await _check(store, tid, 2, 3)


def _long_export(count: int, swap: int | None = None) -> dict[str, Any]:
    """A ``panelot.thread`` export: a path of ``count`` alternating messages.

    Message 3 has a second version (an assistant message); the leaf ends the long path.

    ``swap``: the node at that index gets a seq above its child's (out of order, as
    other code may store them).
    """
    nodes: list[dict[str, Any]] = []
    parent = None
    for i in range(count):
        kind = "assistant_message" if i % 2 else "user_message"
        payload = answer(f"a{i}") if i % 2 else text(f"u{i}")
        nodes.append({"id": f"n{i}", "threadId": "t", "parentId": parent, "seq": i + 1,
                      "ts": 1, "type": kind, "payload": payload})  # fmt: skip
        parent = f"n{i}"
    nodes.append({"id": "v3", "threadId": "t", "parentId": "n2", "seq": count + 1, "ts": 1,
                  "type": "assistant_message", "payload": answer("v3")})  # fmt: skip
    if swap is not None:
        nodes[swap]["seq"] = count + 10
    thread = {
        "id": "t", "title": "long", "createdAt": 1, "updatedAt": 1, "leafId": parent,
        "tags": [], "pinned": False, "archived": False,
        "stats": {"turns": 0, "totalTokens": 0, "costUsd": 0}, "scopeOrigins": [],
    }  # fmt: skip
    return {"format": "panelot.thread", "version": 1, "exportedAt": 1, "thread": thread,
            "nodes": nodes}  # fmt: skip


async def case_shown_over_long_paths_read_by_windows(ctx: Ctx) -> None:
    """Walks longer than a few gets read links by seq windows; out-of-order seqs too."""
    store = await ctx.store()
    for swap in (None, 300, 1):
        data = _long_export(1200, swap)
        tid = (await store.command("thread.import", {"data": data}))["threadId"]
        await _check(store, tid, 600, 1200)
        snap = await store.snapshot(tid)
        ids = [n["id"] for n in snap["nodes"]]
        fourth = ids[3]  # the reply at the branch point, beside "v3"
        version = next(v for v in snap["nodes"][3]["siblings"] if v != fourth)
        # Switch far up (a two-sided walk over ~1,200 nodes), and back.
        await store.command("branch.switch", {"threadId": tid, "nodeId": version})
        await _check(store, tid, 2, 4)
        await store.command("branch.switch", {"threadId": tid, "nodeId": fourth})
        await _check(store, tid, 600, 1200)
        # Counts that no longer hold: the next switch counts the whole path afresh.
        raw = await store.db.table("threads").get(tid)
        await store.db.table("threads").put({k: v for k, v in raw.items() if k != "shown"})
        await store.command("branch.switch", {"threadId": tid, "nodeId": ids[-1]})
        await _check(store, tid, 600, 1200)
        await store.command("branch.switch", {"threadId": tid, "nodeId": version})
        await _check(store, tid, 2, 4)
