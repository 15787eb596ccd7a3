"""Deleting a version of a message never hides the other versions."""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from panelot.idb import PanelotError
from panelot.store import PanelotStore


async def _snap(store: PanelotStore, tid: str) -> list[tuple[str, int, int]]:
    """The shown path as ``(id, siblingIndex, siblingCount)``."""
    snap = await store.snapshot(tid)
    return [(n["id"], n["siblingIndex"], n["siblingCount"]) for n in snap["nodes"]]


async def _delete(store: PanelotStore, tid: str, node_id: str) -> Any:
    return await store.command("message.delete", {"threadId": tid, "nodeId": node_id})


async def _regenerate(store: PanelotStore, tid: str, user: str, words: str) -> str:
    out = await store.command(
        "message.regenerate", {"threadId": tid, "userNodeId": user, "payload": answer(words)}
    )
    return str(out["nodeId"])


async def case_deleting_a_regenerated_reply_shows_the_other(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    u = (await store.append(tid, "user_message", text("hi")))["nodeId"]
    a1 = (await store.append(tid, "assistant_message", answer("first")))["nodeId"]
    a2 = await _regenerate(store, tid, u, "second")
    assert await _snap(store, tid) == [(u, 1, 1), (a2, 2, 2)]
    out = await _delete(store, tid, a2)
    assert out == {"deleted": [a2], "leafId": a1}  # moved in the same transaction
    assert (await store.query("thread.get", {"threadId": tid}))["leafId"] == a1
    assert await _snap(store, tid) == [(u, 1, 1), (a1, 1, 1)]
    assert (await store.context(tid))["path"] == [u, a1]
    # and after the last reply goes, the leaf is the user message: nothing is hidden
    assert (await _delete(store, tid, a1))["leafId"] == u
    assert await _snap(store, tid) == [(u, 1, 1)]


async def case_deleting_an_edited_message_keeps_the_original_branch(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    v1 = (await store.append(tid, "user_message", text("Version one")))["nodeId"]
    r1 = (await store.append(tid, "assistant_message", answer("r1")))["nodeId"]
    f1 = (await store.append(tid, "user_message", text("Follow up one")))["nodeId"]
    r2 = (await store.append(tid, "assistant_message", answer("r2")))["nodeId"]
    edit = {"threadId": tid, "nodeId": v1, "payload": text("Version two")}
    v2 = (await store.command("message.edit", edit))["nodeId"]
    r3 = (await store.append(tid, "assistant_message", answer("r3")))["nodeId"]
    assert await _snap(store, tid) == [(v2, 2, 2), (r3, 1, 1)]
    # Deleting "Version two": its reply now stands at its place, beside "Version one",
    # and the selector offers both.
    await _delete(store, tid, v2)
    assert await _snap(store, tid) == [(r3, 2, 2)]
    siblings = (await store.snapshot(tid))["nodes"][0]["siblings"]
    assert siblings == [v1, r3]
    switched = await store.command("branch.switch", {"threadId": tid, "nodeId": v1})
    assert switched["leafId"] == r2
    assert await _snap(store, tid) == [(v1, 1, 2), (r1, 1, 1), (f1, 1, 1), (r2, 1, 1)]


async def case_deleting_a_whole_branch_moves_to_the_other_version(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    v1 = (await store.append(tid, "user_message", text("Version one")))["nodeId"]
    await store.append(tid, "assistant_message", answer("r1"))
    await store.append(tid, "user_message", text("Follow up one"))
    r2 = (await store.append(tid, "assistant_message", answer("r2")))["nodeId"]
    edit = {"threadId": tid, "nodeId": v1, "payload": text("Version two")}
    v2 = (await store.command("message.edit", edit))["nodeId"]
    r3 = (await store.append(tid, "assistant_message", answer("r3")))["nodeId"]
    await _delete(store, tid, r3)  # the 2/2 reply first: the leaf moves to "Version two"
    assert await _snap(store, tid) == [(v2, 2, 2)]
    out = await _delete(store, tid, v2)  # then the message: back to the first branch
    assert out["leafId"] == r2
    shown = await _snap(store, tid)
    assert [s[0] for s in shown][0] == v1 and shown[0][1:] == (1, 1)
    assert len(shown) == 4


async def case_versions_and_switches_look_through_tombstones(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    u = (await store.append(tid, "user_message", text("q")))["nodeId"]
    a1 = (await store.append(tid, "assistant_message", answer("a1")))["nodeId"]
    a2 = await _regenerate(store, tid, u, "a2")
    a3 = await _regenerate(store, tid, u, "a3")
    await _delete(store, tid, a3)
    listed = await store.query("thread.siblings", {"nodeId": a1})
    assert [s["id"] for s in listed] == [a1, a2]  # the tombstone is no version
    assert [s["id"] for s in await store.query("thread.siblings", {"nodeId": a3})] == [a1, a2]
    # switching to the question takes its newest live reply, not the deleted newest one
    out = await store.command("branch.switch", {"threadId": tid, "nodeId": u})
    assert out["leafId"] == a2
    # a deleted reply's live follow-up is a version at the reply's place
    follow = (await store.append(tid, "user_message", text("more"), parentId=a1))["nodeId"]
    await _delete(store, tid, a1)
    versions = [s["id"] for s in await store.query("thread.siblings", {"nodeId": follow})]
    assert versions == [a2, follow]
    assert await _snap(store, tid) == [(u, 1, 1), (follow, 2, 2)]


async def case_a_leaf_stored_on_tombstones_is_revived_on_load(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    u = (await store.append(tid, "user_message", text("hi")))["nodeId"]
    a1 = (await store.append(tid, "assistant_message", answer("first")))["nodeId"]
    a2 = await _regenerate(store, tid, u, "second")
    # what older code (or another program) left: the leaf on a tombstoned reply
    await store.db.table("nodes").update(a2, {"payload.deleted": True})
    assert (await store.query("thread.get", {"threadId": tid}))["leafId"] == a2
    assert await _snap(store, tid) == [(u, 1, 1), (a1, 1, 1)]
    assert (await store.query("thread.get", {"threadId": tid}))["leafId"] == a1


async def case_a_thread_with_nothing_live_keeps_its_leaf(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("t")
    u = (await store.append(tid, "user_message", text("hi")))["nodeId"]
    a = (await store.append(tid, "assistant_message", answer("a")))["nodeId"]
    assert (await _delete(store, tid, a))["leafId"] == u
    assert await _delete(store, tid, u) == {"deleted": [u], "leafId": u}
    assert await _snap(store, tid) == []
    assert (await store.context(tid))["messages"] == []
    again = await _delete(store, tid, u)  # deleting a tombstone again changes nothing
    assert again == {"deleted": [], "leafId": u}


async def _turn_context(store: PanelotStore, tid: str, parent: str) -> str:
    payload = {"turnId": "t", "model": "m", "permissionPolicy": "ask", "activeSkills": []}
    out = await store.append(tid, "turn_context", payload, parentId=parent)
    return str(out["nodeId"])


async def _dead_turn_beside_a_version(store: PanelotStore, tid: str) -> tuple[str, ...]:
    """``u`` with two versions below: a turn whose reply was deleted, and ``u2``'s branch."""
    u = (await store.append(tid, "user_message", text("hi")))["nodeId"]
    turn = await _turn_context(store, tid, u)
    reply = (await store.append(tid, "assistant_message", answer("a"), parentId=turn))["nodeId"]
    u2 = (await store.append(tid, "user_message", text("again"), parentId=u))["nodeId"]
    a2 = (await store.append(tid, "assistant_message", answer("b")))["nodeId"]
    assert await _snap(store, tid) == [(u, 1, 1), (u2, 2, 2), (a2, 1, 1)]
    return u, turn, reply, u2, a2


async def case_deleting_a_turns_reply_moves_past_its_turn_context(ctx: Ctx) -> None:
    """The leaf moves from the last *shown* node: a dead turn would strand the other version."""
    store = await ctx.store()
    tid = await store.create_thread("t")
    u, turn, reply, u2, a2 = await _dead_turn_beside_a_version(store, tid)
    await store.command("branch.switch", {"threadId": tid, "nodeId": turn})
    assert await _snap(store, tid) == [(u, 1, 1), (reply, 1, 2)]
    out = await _delete(store, tid, reply)
    assert out == {"deleted": [reply], "leafId": a2}  # not the turn context, which shows nothing
    assert await _snap(store, tid) == [(u, 1, 1), (u2, 1, 1), (a2, 1, 1)]


async def case_a_switch_to_a_turn_that_shows_nothing_is_refused(ctx: Ctx) -> None:
    """Beside versions, a turn context with nothing shown below it is no place for the leaf."""
    store = await ctx.store()
    tid = await store.create_thread("t")
    u, turn, reply, _, a2 = await _dead_turn_beside_a_version(store, tid)
    await _delete(store, tid, reply)
    try:
        await store.command("branch.switch", {"threadId": tid, "nodeId": turn})
    except PanelotError as exc:
        assert exc.name == "ValidationError" and str(exc.field).endswith("nodeId"), exc.field
        assert "versions at its place" in str(exc)
    else:
        raise AssertionError("the switch was accepted")
    assert (await store.query("thread.get", {"threadId": tid}))["leafId"] == a2
    # with no version beside it, a turn that has only begun is still a place to switch to
    alone = await store.create_thread("alone")
    first = (await store.append(alone, "user_message", text("hi")))["nodeId"]
    begun = await _turn_context(store, alone, first)
    other = (await store.append(alone, "user_message", text("next"), parentId=first))["nodeId"]
    await _delete(store, alone, other)
    out = await store.command("branch.switch", {"threadId": alone, "nodeId": begun})
    assert out["leafId"] == begun


async def case_deleting_the_message_above_a_bare_turn_moves_to_the_other_version(ctx: Ctx) -> None:
    """A delete that leaves the path ending in a turn context beside versions moves on."""
    store = await ctx.store()
    tid = await store.create_thread("t")
    u = (await store.append(tid, "user_message", text("hi")))["nodeId"]
    turn = await _turn_context(store, tid, u)
    a1 = (await store.append(tid, "assistant_message", answer("a"), parentId=turn))["nodeId"]
    u2 = (await store.append(tid, "user_message", text("again"), parentId=u))["nodeId"]
    turn2 = await _turn_context(store, tid, u2)
    a2 = (await store.append(tid, "assistant_message", answer("b"), parentId=turn2))["nodeId"]
    # The reply goes: its turn context stays the leaf (nothing else stands below "again").
    assert (await _delete(store, tid, a2))["leafId"] == turn2
    assert await _snap(store, tid) == [(u, 1, 1), (u2, 2, 2)]
    # "again" goes: its place would show nothing, beside the first turn's reply.
    assert await _delete(store, tid, u2) == {"deleted": [u2], "leafId": a1}
    assert await _snap(store, tid) == [(u, 1, 1), (a1, 1, 1)]
