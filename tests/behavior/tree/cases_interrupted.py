"""Replies that ended early: ``interrupted`` on an assistant message (stopped, cut off).

The panel stores what had streamed when the user pressed Stop (``"stopped"``) or the
stream broke off (``"cut_off"``) as one reply node; it is a reply like any other for
later requests, versions and transfer. Bad values, and an interrupted reply without
text, are refused naming ``payload.interrupted`` and write nothing.
"""

from __future__ import annotations

from typing import Any

from behavior import Ctx, raises
from behavior.payloads import text
from panelot.idb.errors import ValidationError


def partial(t: str, interrupted: Any) -> dict[str, Any]:
    """An assistant payload holding the text that arrived before the reply ended."""
    return {
        "content": [{"type": "text", "text": t}],
        "model": "m1",
        "connectionId": "c1",
        "interrupted": interrupted,
    }


async def case_an_interrupted_reply_is_stored_and_sent_as_what_the_assistant_said(
    ctx: Ctx,
) -> None:
    store = await ctx.store()
    tid = await store.create_thread("stopped")
    q1 = await store.append(tid, "user_message", text("tell me a long story"))
    a1 = await store.append(tid, "assistant_message", partial("Once upon a", "stopped"))
    await store.append(tid, "user_message", text("go on"))
    nodes = (await store.snapshot(tid))["nodes"]
    assert [n["type"] for n in nodes] == ["user_message", "assistant_message", "user_message"]
    assert nodes[1]["id"] == a1["nodeId"] and nodes[1]["payload"]["interrupted"] == "stopped"
    assert (await store.query("thread.get", {"threadId": tid}))["stats"]["turns"] == 1
    out = await store.query("thread.request", {"threadId": tid})
    assert [(m["role"], m["content"]) for m in out["messages"]] == [
        ("user", [{"type": "text", "text": "tell me a long story"}]),
        ("assistant", [{"type": "text", "text": "Once upon a"}]),
        ("user", [{"type": "text", "text": "go on"}]),
    ]
    assert "interrupted" not in out["messages"][1]  # the provider gets the text alone
    # A retry of a cut-off reply is a new version beside it, complete or not.
    cut = await store.command(
        "message.regenerate",
        {"threadId": tid, "userNodeId": q1["nodeId"], "payload": partial("Once", "cut_off")},
    )
    shown = (await store.snapshot(tid))["nodes"]
    assert [n["id"] for n in shown] == [q1["nodeId"], cut["nodeId"]]
    assert shown[1]["payload"]["interrupted"] == "cut_off" and shown[1]["siblingCount"] == 2
    # The Markdown export says how the shown reply ended.
    md = (await store.query("thread.export", {"threadId": tid, "format": "markdown"}))["markdown"]
    assert "## Assistant (cut off)\n\nOnce\n" in md and "## Assistant\n" not in md
    # A thread's export and import keep the mark.
    data = (await store.query("thread.export", {"threadId": tid}))["data"]
    again = await store.command("thread.import", {"data": data})
    kept = [
        n["payload"].get("interrupted")
        for n in (await store.snapshot(again["threadId"]))["nodes"]
        if n["type"] == "assistant_message"
    ]
    assert kept == ["cut_off"]


async def case_a_complete_reply_has_no_interrupted_field(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("complete")
    await store.append(tid, "user_message", text("hi"))
    done = {"content": [{"type": "text", "text": "hello"}], "model": "m1", "connectionId": "c1"}
    await store.append(tid, "assistant_message", done)
    reply = (await store.snapshot(tid))["nodes"][1]["payload"]
    assert "interrupted" not in reply


async def case_a_bad_interrupted_is_refused_naming_the_field(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("bad")
    q1 = await store.append(tid, "user_message", text("hi"))
    bad: list[dict[str, Any]] = [
        partial("some text", "done"),
        partial("some text", True),
        partial("some text", ""),
        partial("", "stopped"),  # nothing arrived: no reply is stored
        {**partial("x", "cut_off"), "content": [{"type": "image", "attachmentId": "a1"}]},
    ]
    for payload in bad:
        for kind, body in (
            ("message.append", {"threadId": tid, "type": "assistant_message", "payload": payload}),
            (
                "message.regenerate",
                {"threadId": tid, "userNodeId": q1["nodeId"], "payload": payload},
            ),
        ):
            error = await raises(ValidationError, store.command(kind, body))
            assert getattr(error, "field", None) == "payload.interrupted", (kind, payload, error)
            assert "interrupted" in str(error)
    nodes = (await store.snapshot(tid))["nodes"]
    assert [n["id"] for n in nodes] == [q1["nodeId"]]  # nothing was written
    assert (await store.query("thread.get", {"threadId": tid}))["stats"]["turns"] == 0
