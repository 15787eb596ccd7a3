"""Large UI details of tool results go to attachments; the node keeps a reference."""

from __future__ import annotations

import json
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import text
from panelot.attachments.tool_details import DETAILS_INLINE_LIMIT
from panelot.idb.blobs import blob_bytes, blob_size, is_blob
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.store import PanelotStore


def details_of_size(size: int) -> dict[str, Any]:
    """Details whose compact JSON is exactly ``size`` bytes (UTF-8, one 2-byte character)."""
    empty = len(json.dumps({"rows": ""}, separators=(",", ":")).encode())
    filler = "é" + "x" * (size - empty - 2)
    details = {"rows": filler}
    assert len(json.dumps(details, ensure_ascii=False, separators=(",", ":")).encode()) == size
    return details


def result(details: Any, item_id: str = "call-1") -> dict[str, Any]:
    payload = {"itemId": item_id, "ok": True, "contentForLlm": [{"type": "text", "text": "done"}]}
    return {**payload, "details": details}


async def attachments_of(store: PanelotStore, tid: str) -> list[dict[str, Any]]:
    rows = await store.db.table("attachments").where("threadId").equals(tid).to_list()
    return list(rows)


async def setup(ctx: Ctx) -> tuple[PanelotStore, str]:
    store = await ctx.store()
    tid = await store.create_thread("Tools")
    await store.append(tid, "user_message", text("Read the page"))
    await store.append(
        tid,
        "tool_call",
        {"itemId": "call-1", "toolName": "read_page", "params": {}, "level": "builtin"},
    )
    return store, tid


async def case_details_at_the_limit_stay_inline(ctx: Ctx) -> None:
    store, tid = await setup(ctx)
    details = details_of_size(DETAILS_INLINE_LIMIT)
    out = await store.append(tid, "tool_result", result(details))
    node = await store.db.table("nodes").get(out["nodeId"])
    assert node["payload"]["details"] == details
    assert await attachments_of(store, tid) == []
    got = await store.query("node.details", {"nodeId": out["nodeId"]})
    assert got == {"nodeId": out["nodeId"], "stored": "inline", "details": details}
    small = await store.append(tid, "tool_result", result({"n": 1}, "call-2"))
    got = await store.query("node.details", {"nodeId": small["nodeId"]})
    assert got["details"] == {"n": 1} and await attachments_of(store, tid) == []


async def case_large_details_become_an_attachment_in_the_same_append(ctx: Ctx) -> None:
    store, tid = await setup(ctx)
    details = {**details_of_size(DETAILS_INLINE_LIMIT + 1), "nested": [1, {"a": None}]}
    data = json.dumps(details, ensure_ascii=False, separators=(",", ":")).encode()
    out = await store.append(tid, "tool_result", result(details))
    node = await store.db.table("nodes").get(out["nodeId"])
    ref = node["payload"]["details"]
    [att] = await attachments_of(store, tid)
    assert ref == {
        "storedAs": "attachment",
        "attachmentId": att["id"],
        "mime": "application/json",
        "size": len(data),
    }
    assert (att["kind"], att["mime"], att["provenance"]) == ("file", "application/json", "tool")
    assert att["refs"] == {"nodeIds": [out["nodeId"]]} and att["size"] == len(data)
    assert att["sourceRef"] == "tool-details:call-1"
    assert is_blob(att["bytes"]) and blob_size(att["bytes"]) == len(data)
    assert await blob_bytes(att["bytes"]) == data
    assert node["payload"]["contentForLlm"] == [{"type": "text", "text": "done"}]
    got = await store.query("node.details", {"nodeId": out["nodeId"]})
    assert got == {
        "nodeId": out["nodeId"],
        "stored": "attachment",
        "attachmentId": att["id"],
        "size": len(data),
        "details": details,
    }
    snap = await store.query("thread.snapshot", {"threadId": tid})
    assert snap["nodes"][-1]["payload"]["details"] == ref
    usage = await store.query("attachment.usage", {})
    assert (usage["count"], usage["total"]) == (1, len(data))
    context = await store.context(tid)
    assert context["messages"][-1]["content"] == [{"type": "text", "text": "done"}]


async def case_a_failed_append_writes_no_details_attachment(ctx: Ctx) -> None:
    store, tid = await setup(ctx)
    big = details_of_size(DETAILS_INLINE_LIMIT * 2)
    before = await store.db.table("nodes").count()
    bad_parent = {
        "threadId": tid,
        "type": "tool_result",
        "payload": result(big),
        "parentId": "nope",
    }
    err = await raises(ValidationError, store.command("message.append", bad_parent))
    assert err.field == "payload.parentId"
    bad_payload = {**result(big), "ok": "yes"}
    err = await raises(ValidationError, store.append(tid, "tool_result", bad_payload))
    assert err.field == "payload.ok"
    assert await attachments_of(store, tid) == []
    assert await store.db.table("nodes").count() == before
    cmd = {"threadId": tid, "type": "tool_result", "payload": result(big)}
    first = await store.command("message.append", cmd, "sub-1")
    again = await store.command("message.append", cmd, "sub-1")
    assert again == first and len(await attachments_of(store, tid)) == 1


async def case_evicted_details_read_as_evicted(ctx: Ctx) -> None:
    store, tid = await setup(ctx)
    out = await store.append(tid, "tool_result", result(details_of_size(40_000)))
    other = await store.create_thread("Other")
    evicted = await store.command("attachment.evict", {"budget": 0, "activeThreadId": other})
    assert evicted["evicted"] == 1
    got = await store.query("node.details", {"nodeId": out["nodeId"]})
    assert got["details"] is None and got["evicted"] is True and got["stored"] == "attachment"
    snap = await store.query("thread.snapshot", {"threadId": tid})
    assert snap["nodes"][-1]["payload"]["details"]["evicted"] is True
    assert await attachments_of(store, tid) == []


async def case_node_details_refuses_other_nodes(ctx: Ctx) -> None:
    store, tid = await setup(ctx)
    user = await store.append(tid, "user_message", text("hi"))
    err = await raises(ValidationError, store.query("node.details", {"nodeId": user["nodeId"]}))
    assert err.field == "nodeId"
    err = await raises(NotFoundError, store.query("node.details", {"nodeId": "missing"}))
    assert err.field == "nodeId"
    err = await raises(ValidationError, store.query("node.details", {}))
    assert err.field == "nodeId"


async def case_thread_delete_removes_details_attachments(ctx: Ctx) -> None:
    store, tid = await setup(ctx)
    await store.append(tid, "tool_result", result(details_of_size(50_000)))
    assert len(await attachments_of(store, tid)) == 1
    await store.command("thread.delete", {"threadId": tid})
    assert await attachments_of(store, tid) == []


async def case_only_tool_results_widen_the_append_transaction(ctx: Ctx) -> None:
    from panelot.api.messages import MessageAppend
    from panelot.api.registry import COMMANDS

    handler = COMMANDS["message.append"]
    assert handler.tables == ("threads", "nodes") and handler.extra_tables is not None

    def of(kind: str) -> MessageAppend:
        return MessageAppend(thread_id="t", type=kind, payload={})

    assert handler.extra_tables(of("user_message")) == ()
    assert handler.extra_tables(of("assistant_message")) == ()
    assert handler.extra_tables(of("tool_result")) == ("attachments",)
