"""Session context, UI snapshot and Markdown export (docs/tree.md)."""

from __future__ import annotations

from behavior import Ctx
from behavior.payloads import answer, text


async def case_context_messages_and_exclusions(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("ctx")
    await store.append(
        tid,
        "turn_context",
        {"turnId": "t1", "model": "m1", "permissionPolicy": "ask", "activeSkills": []},
    )
    u = await store.append(
        tid,
        "user_message",
        {
            **text("find it"),
            "attachedContext": [{"type": "page", "url": "https://x.test", "text": "page"}],
        },
    )
    await store.append(tid, "assistant_message", {**answer("calling"), "reasoning": "think"})
    await store.append(
        tid,
        "tool_call",
        {"itemId": "i1", "toolName": "search", "params": {"q": "x"}, "level": "L0"},
    )
    await store.append(
        tid,
        "approval_decision",
        {"approvalId": "ap", "request": {}, "decision": "approved", "ts": 1},
    )
    await store.append(
        tid,
        "tool_result",
        {"itemId": "i1", "ok": True, "contentForLlm": [{"type": "text", "text": "found"}]},
    )
    await store.append(
        tid,
        "interaction_response",
        {"interactionId": "in", "request": {}, "response": "yes", "respondedAt": 2},
    )
    await store.append(tid, "system_notice", {"text": "paused", "level": "info"})
    await store.append(
        tid,
        "turn_context",
        {"turnId": "t2", "model": "m2", "permissionPolicy": "ask", "activeSkills": ["s"]},
    )
    await store.append(tid, "assistant_message", answer("done"))
    out = await store.context(tid)
    roles = [m["role"] for m in out["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert out["messages"][0]["attachedContext"][0]["url"] == "https://x.test"
    assert out["messages"][1]["toolCalls"] == [
        {"itemId": "i1", "toolName": "search", "params": {"q": "x"}}
    ]
    assert out["messages"][1]["reasoning"] == "think"
    assert out["messages"][2] == {
        "role": "tool",
        "itemId": "i1",
        "ok": True,
        "content": [{"type": "text", "text": "found"}],
    }
    assert out["turnContext"]["turnId"] == "t2"
    assert len(out["path"]) == 10 and out["path"][1] == u["nodeId"]
    snap = await store.snapshot(tid)
    kinds = [n["type"] for n in snap["nodes"]]
    assert "turn_context" not in kinds and "interaction_response" not in kinds
    assert "system_notice" in kinds and "approval_decision" in kinds
    md = (await store.query("thread.export", {"threadId": tid, "format": "markdown"}))["markdown"]
    assert md.startswith("# ctx\n") and "## User" in md and "find it" in md and "> paused" in md
    assert "**Tool call** `search`" in md


async def case_context_for_explicit_leaf_and_unknown_leaf(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    u = await store.append(tid, "user_message", text("a"))
    await store.append(tid, "assistant_message", answer("b"))
    out = await store.query("thread.context", {"threadId": tid, "leafId": u["nodeId"]})
    assert out["path"] == [u["nodeId"]]
    try:
        await store.query("thread.context", {"threadId": tid, "leafId": "nope"})
    except Exception as exc:  # noqa: BLE001 - checking the error's name
        assert getattr(exc, "name", "") == "NotFoundError"
    else:
        raise AssertionError("an unknown leaf must fail")


async def case_context_is_deterministic(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread()
    for i in range(20):
        await store.append(
            tid,
            "user_message" if i % 2 == 0 else "assistant_message",
            text(f"m{i}") if i % 2 == 0 else answer(f"m{i}"),
        )
    import json

    first = json.dumps(await store.context(tid), sort_keys=False)
    second = json.dumps(await store.context(tid), sort_keys=False)
    assert first == second
