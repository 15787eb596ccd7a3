"""Tree operations through the command bus (docs/tree.md)."""

from __future__ import annotations

from behavior import Ctx
from behavior.payloads import answer, text
from panelot.store import PanelotStore


async def thread(store: PanelotStore, title: str = "T") -> str:
    return await store.create_thread(title)


async def case_append_assigns_seq_moves_leaf_and_updates_time(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await thread(store)
    before = await store.query("thread.get", {"threadId": tid})
    a = await store.append(tid, "user_message", text("hi"))
    b = await store.append(tid, "assistant_message", answer("hello", 5, 0.25))
    c = await store.append(tid, "user_message", text("more"))
    assert [a["seq"], b["seq"], c["seq"]] == [1, 2, 3]
    meta = await store.query("thread.get", {"threadId": tid})
    assert meta["leafId"] == c["nodeId"]
    assert meta["updatedAt"] > before["updatedAt"]
    assert meta["stats"] == {"turns": 1, "totalTokens": 10, "costUsd": 0.25}
    snap = await store.snapshot(tid)
    assert [n["id"] for n in snap["nodes"]] == [a["nodeId"], b["nodeId"], c["nodeId"]]
    assert snap["nodes"][1]["parentId"] == a["nodeId"]


async def case_parent_must_exist_in_same_thread(ctx: Ctx) -> None:
    store = await ctx.store()
    t1, t2 = await thread(store), await thread(store)
    other = await store.append(t2, "user_message", text("elsewhere"))
    out = await store.send(
        {
            "type": "message.append",
            "clientId": "c",
            "submissionId": "s1",
            "payload": {
                "threadId": t1,
                "type": "user_message",
                "payload": text("x"),
                "parentId": other["nodeId"],
            },
        }
    )
    assert out["status"] == "failed" and out["error"]["field"] == "payload.parentId"
    root = await store.append(t1, "user_message", text("root"), parentId=None)
    second_root = await store.append(t1, "user_message", text("another root"), parentId=None)
    assert root["seq"] == 1 and second_root["seq"] == 2
    assert (await store.query("thread.check", {"threadId": t1}))["ok"]


async def case_edit_regenerate_siblings_and_switch(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await thread(store)
    u1 = await store.append(tid, "user_message", text("q1"))
    a1 = await store.append(tid, "assistant_message", answer("a1"))
    u2 = await store.append(tid, "user_message", text("q2"))
    # edit u1 -> new sibling under u1's parent (a root), leaf moves there
    e1 = await store.command(
        "message.edit", {"threadId": tid, "nodeId": u1["nodeId"], "payload": text("q1 edited")}
    )
    assert (await store.query("thread.get", {"threadId": tid}))["leafId"] == e1["nodeId"]
    sibs = await store.query("thread.siblings", {"nodeId": u1["nodeId"]})
    assert [s["id"] for s in sibs] == [u1["nodeId"], e1["nodeId"]]
    # regenerate under e1 twice: the newest assistant branch is the leaf
    r1 = await store.command(
        "message.regenerate", {"threadId": tid, "userNodeId": e1["nodeId"], "payload": answer("r1")}
    )
    r2 = await store.command(
        "message.regenerate", {"threadId": tid, "userNodeId": e1["nodeId"], "payload": answer("r2")}
    )
    snap = await store.snapshot(tid)
    assert [n["id"] for n in snap["nodes"]] == [e1["nodeId"], r2["nodeId"]]
    assert (snap["nodes"][0]["siblingIndex"], snap["nodes"][0]["siblingCount"]) == (2, 2)
    assert (snap["nodes"][1]["siblingIndex"], snap["nodes"][1]["siblingCount"]) == (2, 2)
    # switch back to u1: deepest newest descendant is u2
    switched = await store.command("branch.switch", {"threadId": tid, "nodeId": u1["nodeId"]})
    assert switched == {"leafId": u2["nodeId"]}
    path = (await store.context(tid))["path"]
    assert path == [u1["nodeId"], a1["nodeId"], u2["nodeId"]]
    # switching to r1 (a leaf) makes it the leaf
    assert (await store.command("branch.switch", {"threadId": tid, "nodeId": r1["nodeId"]}))[
        "leafId"
    ] == r1["nodeId"]
    # an assistant message cannot be edited; regenerate needs a user message
    bad = await store.send(
        {
            "type": "message.edit",
            "clientId": "c",
            "submissionId": "e",
            "payload": {"threadId": tid, "nodeId": a1["nodeId"], "payload": text("x")},
        }
    )
    assert bad["status"] == "failed" and bad["error"]["field"] == "payload.nodeId"
    bad = await store.send(
        {
            "type": "message.regenerate",
            "clientId": "c",
            "submissionId": "r",
            "payload": {"threadId": tid, "userNodeId": a1["nodeId"], "payload": answer("x")},
        }
    )
    assert bad["status"] == "failed" and bad["error"]["field"] == "payload.userNodeId"


async def case_switch_takes_highest_seq_child_per_level(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await thread(store)
    root = await store.append(tid, "user_message", text("root"))
    left = await store.append(tid, "assistant_message", answer("left"), parentId=root["nodeId"])
    await store.append(tid, "user_message", text("left child"), parentId=left["nodeId"])
    right = await store.append(tid, "assistant_message", answer("right"), parentId=root["nodeId"])
    deep_old = await store.append(tid, "user_message", text("r1"), parentId=right["nodeId"])
    deep_new = await store.append(tid, "user_message", text("r2"), parentId=right["nodeId"])
    await store.append(tid, "assistant_message", answer("under old"), parentId=deep_old["nodeId"])
    out = await store.command("branch.switch", {"threadId": tid, "nodeId": root["nodeId"]})
    assert out["leafId"] == deep_new["nodeId"]


async def case_tombstone_keeps_children_connected(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await thread(store)
    u1 = await store.append(tid, "user_message", text("one"))
    a1 = await store.append(tid, "assistant_message", answer("two"))
    u2 = await store.append(tid, "user_message", text("three"))
    out = await store.command("message.delete", {"threadId": tid, "nodeId": a1["nodeId"]})
    assert out == {"deleted": [a1["nodeId"]], "leafId": u2["nodeId"]}
    ctx_out = await store.context(tid)
    assert ctx_out["path"] == [u1["nodeId"], u2["nodeId"]]
    assert [m["role"] for m in ctx_out["messages"]] == ["user", "user"]
    snap = await store.snapshot(tid)
    assert [n["id"] for n in snap["nodes"]] == [u1["nodeId"], u2["nodeId"]]
    export = (await store.query("thread.export", {"threadId": tid, "format": "json"}))["data"]
    stored = {n["id"]: n for n in export["nodes"]}
    assert stored[a1["nodeId"]]["payload"]["deleted"] is True  # never physically deleted
    assert len(stored) == 3


async def case_thread_metadata_and_list(ctx: Ctx) -> None:
    store = await ctx.store()
    ids = [await store.create_thread(f"t{i}") for i in range(5)]
    await store.command(
        "thread.update", {"threadId": ids[1], "patch": {"pinned": True, "tags": ["work"]}}
    )
    await store.command("thread.update", {"threadId": ids[2], "patch": {"archived": True}})
    await store.command(
        "thread.update", {"threadId": ids[3], "patch": {"folderId": "f1", "title": "renamed"}}
    )
    listed = await store.query("thread.list", {})
    assert [t["id"] for t in listed] == [ids[1], ids[3], ids[4], ids[0]]
    assert [t["id"] for t in await store.query("thread.list", {"archived": True})] == [ids[2]]
    assert [t["id"] for t in await store.query("thread.list", {"folderId": "f1"})] == [ids[3]]
    assert [t["id"] for t in await store.query("thread.list", {"tag": "work"})] == [ids[1]]
    assert len(await store.query("thread.list", {"limit": 2})) == 2
    assert (await store.query("thread.get", {"threadId": ids[3]}))["title"] == "renamed"
    bad = await store.send(
        {
            "type": "thread.update",
            "clientId": "c",
            "submissionId": "x",
            "payload": {"threadId": ids[0], "patch": {"leafId": "evil"}},
        }
    )
    assert bad["status"] == "failed" and bad["error"]["field"] == "payload.patch.leafId"
    bad = await store.send(
        {
            "type": "thread.update",
            "clientId": "c",
            "submissionId": "y",
            "payload": {"threadId": ids[0], "patch": {"pinned": "yes"}},
        }
    )
    assert bad["status"] == "failed" and bad["error"]["field"] == "payload.patch.pinned"


async def case_node_payloads_are_validated_with_field_names(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await thread(store)
    cases = [
        ("user_message", {"content": [{"type": "text", "text": 1}]}, "payload.content[0].text"),
        ("user_message", {"content": [{"type": "video"}]}, "payload.content[0].type"),
        (
            "tool_call",
            {"itemId": "i", "toolName": "t", "params": {}, "level": "L9"},
            "payload.level",
        ),
        ("assistant_message", {"content": [], "model": "m"}, "payload.connectionId"),
        (
            "assistant_message",
            {
                "content": [],
                "model": "m",
                "connectionId": "c",
                "providerState": {
                    "provider": "anthropic",
                    "blocks": [{"type": "thinking", "thinking": "x", "signature": "s", "extra": 1}],
                },
            },
            "payload.providerState.blocks[0].extra",
        ),
        (
            "assistant_message",
            {
                "content": [],
                "model": "m",
                "connectionId": "c",
                "providerState": {
                    "provider": "anthropic",
                    "blocks": [{"type": "redacted_thinking", "data": "d"}] * 65,
                },
            },
            "payload.providerState.blocks",
        ),
        ("nonsense", {}, "payload.type"),
    ]
    for i, (kind, payload, field) in enumerate(cases):
        out = await store.send(
            {
                "type": "message.append",
                "clientId": "c",
                "submissionId": f"v{i}",
                "payload": {"threadId": tid, "type": kind, "payload": payload},
            }
        )
        assert out["status"] == "failed", (kind, payload)
        assert out["error"]["field"] == field, (out["error"], field)
    ok = await store.append(
        tid,
        "assistant_message",
        {
            "content": [],
            "model": "m",
            "connectionId": "c",
            "providerState": {
                "provider": "anthropic",
                "blocks": [
                    {"type": "thinking", "thinking": "t", "signature": "sig"},
                    {"type": "redacted_thinking", "data": "enc"},
                ],
            },
        },
    )
    assert ok["seq"] == 1
    assert (await store.query("thread.export", {"threadId": tid}))["data"]["nodes"][0]["payload"][
        "providerState"
    ]["blocks"][1] == {"type": "redacted_thinking", "data": "enc"}
