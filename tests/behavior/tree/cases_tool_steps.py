"""A model context that providers accept: tool calls and results stay paired."""

from __future__ import annotations

from typing import Any

from behavior import Ctx
from behavior.payloads import answer, text
from panelot.store import PanelotStore
from panelot.tree.tool_steps import NOT_COMPLETED


def call(item: str, tool: str = "search") -> dict[str, Any]:
    return {"itemId": item, "toolName": tool, "params": {"q": item}, "level": "L0"}


def result(item: str, words: str = "found") -> dict[str, Any]:
    return {"itemId": item, "ok": True, "contentForLlm": [{"type": "text", "text": words}]}


def shape(context: dict[str, Any]) -> list[Any]:
    """Each message as its role, with the call ids it carries or the call it answers."""
    out: list[Any] = []
    for m in context["messages"]:
        if m["role"] == "tool":
            out.append(("tool", m["itemId"], m.get("notCompleted", False)))
        elif m.get("toolCalls"):
            out.append((m["role"], [c["itemId"] for c in m["toolCalls"]]))
        else:
            out.append(m["role"])
    return out


async def _turn(store: PanelotStore) -> tuple[str, dict[str, str]]:
    """A thread: question, reply with two calls, their results, a final reply."""
    tid = await store.create_thread("tools")
    ids: dict[str, str] = {}
    ids["u"] = (await store.append(tid, "user_message", text("look it up")))["nodeId"]
    ids["a"] = (await store.append(tid, "assistant_message", answer("looking")))["nodeId"]
    ids["c1"] = (await store.append(tid, "tool_call", call("i1")))["nodeId"]
    ids["c2"] = (await store.append(tid, "tool_call", call("i2")))["nodeId"]
    ids["r2"] = (await store.append(tid, "tool_result", result("i2")))["nodeId"]
    ids["r1"] = (await store.append(tid, "tool_result", result("i1")))["nodeId"]
    ids["f"] = (await store.append(tid, "assistant_message", answer("done")))["nodeId"]
    return tid, ids


async def case_paired_calls_and_results_pass_through(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, _ = await _turn(store)
    out = await store.context(tid)
    assert shape(out) == [
        "user",
        ("assistant", ["i1", "i2"]),
        ("tool", "i2", False),
        ("tool", "i1", False),
        "assistant",
    ]
    assert out["pendingCalls"] == []


async def case_deleting_a_result_tombstones_its_call(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _turn(store)
    out = await store.command("message.delete", {"threadId": tid, "nodeId": ids["r1"]})
    assert sorted(out["deleted"]) == sorted([ids["c1"], ids["r1"]])
    assert shape(await store.context(tid)) == [
        "user",
        ("assistant", ["i2"]),
        ("tool", "i2", False),
        "assistant",
    ]


async def case_deleting_a_call_tombstones_its_results(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _turn(store)
    out = await store.command("message.delete", {"threadId": tid, "nodeId": ids["c2"]})
    assert sorted(out["deleted"]) == sorted([ids["c2"], ids["r2"]])
    assert shape(await store.context(tid)) == [
        "user",
        ("assistant", ["i1"]),
        ("tool", "i1", False),
        "assistant",
    ]
    nodes = {n["id"]: n for n in (await store.snapshot(tid))["nodes"]}
    assert ids["c2"] not in nodes and ids["r2"] not in nodes


async def case_a_result_without_its_call_is_left_out(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _turn(store)
    # another program tombstones only the call: its result answers nothing
    await store.db.table("nodes").update(ids["c1"], {"payload.deleted": True})
    assert shape(await store.context(tid)) == [
        "user",
        ("assistant", ["i2"]),
        ("tool", "i2", False),
        "assistant",
    ]


async def case_a_call_the_user_moved_on_from_gets_a_fixed_result(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("tools")
    await store.append(tid, "user_message", text("q"))
    await store.append(tid, "tool_call", call("i1"))
    await store.append(tid, "tool_call", call("i2"))
    await store.append(tid, "tool_result", result("i2"))
    await store.append(tid, "user_message", text("never mind"))
    out = await store.context(tid)
    assert shape(out) == [
        "user",
        ("assistant", ["i1", "i2"]),
        ("tool", "i2", False),
        ("tool", "i1", True),
        "user",
    ]
    fixed = out["messages"][3]
    assert fixed == {
        "role": "tool",
        "itemId": "i1",
        "ok": False,
        "content": [{"type": "text", "text": NOT_COMPLETED}],
        "notCompleted": True,
    }
    assert (await store.context(tid))["messages"] == out["messages"]  # the same every time
    assert out["pendingCalls"] == []


async def case_a_branch_made_at_an_unanswered_call_closes_it(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("tools")
    await store.append(tid, "user_message", text("q"))
    a = (await store.append(tid, "assistant_message", answer("let me look")))["nodeId"]
    c = (await store.append(tid, "tool_call", call("i1")))["nodeId"]
    await store.append(tid, "tool_result", result("i1"), parentId=c)
    # a second branch from the call: the user typed instead of waiting for the result
    await store.append(tid, "user_message", text("instead"), parentId=c)
    assert shape(await store.context(tid)) == [
        "user",
        ("assistant", ["i1"]),
        ("tool", "i1", True),
        "user",
    ]
    # and a result placed after a later message answers nothing: its step was closed
    await store.append(tid, "tool_result", result("i1"))
    out = await store.context(tid)
    assert shape(out)[-1] == "user" and out["pendingCalls"] == []
    assert a in out["path"]


async def case_calls_waiting_at_the_leaf_are_pending_not_sent(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("tools")
    await store.append(tid, "user_message", text("q"))
    await store.append(tid, "tool_call", call("i1"))
    out = await store.context(tid)
    assert shape(out) == ["user"]  # the empty assistant turn of the call goes too
    assert out["pendingCalls"] == [{"itemId": "i1", "toolName": "search", "params": {"q": "i1"}}]
    await store.append(tid, "approval_decision", {
        "approvalId": "ap", "request": {}, "decision": "approved", "ts": 1,
    })  # fmt: skip
    await store.append(tid, "tool_call", call("i2"))
    await store.append(tid, "tool_result", result("i1"))
    out = await store.context(tid)
    assert shape(out) == ["user", ("assistant", ["i1"]), ("tool", "i1", False)]
    assert [c["itemId"] for c in out["pendingCalls"]] == ["i2"]


async def case_a_repeated_call_id_is_not_sent_twice(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("tools")
    await store.append(tid, "user_message", text("q"))
    await store.append(tid, "tool_call", call("i1"))
    await store.append(tid, "tool_result", result("i1"))
    await store.append(tid, "tool_call", call("i1"))
    await store.append(tid, "tool_result", result("i1", "again"))
    await store.append(tid, "assistant_message", answer("done"))
    out = await store.context(tid)
    assert shape(out) == ["user", ("assistant", ["i1"]), ("tool", "i1", False), "assistant"]
    assert out["messages"][2]["content"][0]["text"] == "found"


async def case_calls_and_results_with_malformed_ids_are_left_out(ctx: Ctx) -> None:
    store = await ctx.store()
    tid, ids = await _turn(store)
    # another program stores ids that are no strings: nothing crashes, they answer nothing
    await store.db.table("nodes").update(ids["r1"], {"payload.itemId": ["i1"]})
    await store.db.table("nodes").update(ids["c2"], {"payload.itemId": {"x": 1}})
    out = await store.context(tid)
    assert shape(out) == [
        "user",
        ("assistant", ["i1"]),
        ("tool", "i1", True),
        "assistant",
    ]
