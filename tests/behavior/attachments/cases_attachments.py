"""Attachments: Blob records, put/read/attach/list through the bus and the Python API."""

from __future__ import annotations

import base64
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import b64, text
from panelot.attachments.budget import put_within_budget
from panelot.attachments.records import get_blob, read_bytes
from panelot.faults import FAULTS, InjectedFault
from panelot.idb.blobs import blob_bytes, blob_size, is_blob, make_blob
from panelot.idb.errors import NotFoundError, ValidationError
from panelot.store import PanelotStore


async def put(store: PanelotStore, tid: str, data: bytes, **extra: Any) -> str:
    payload = {"threadId": tid, "kind": "image", "mime": "image/png", "dataBase64": b64(data)}
    result = await store.command("attachment.put", {**payload, **extra})
    assert result["size"] == len(data)
    return str(result["attachmentId"])


async def interrupted_eviction(store: PanelotStore, budget: int, active_thread: str) -> None:
    """Run ``attachment.evict`` with a fault injected between its two steps; check it failed."""
    FAULTS.arm("attachment.evict.between")
    try:
        failed = await store.send(
            {
                "type": "attachment.evict",
                "clientId": "c",
                "submissionId": "s1",
                "payload": {"budget": budget, "activeThreadId": active_thread},
            }
        )
    finally:
        FAULTS.disarm()
    assert failed["status"] == "failed" and failed["error"]["name"] == InjectedFault.name


def image(attachment_id: str, name: str = "pic.png") -> dict[str, Any]:
    return {"content": [{"type": "image", "attachmentId": attachment_id, "name": name}]}


async def case_bus_put_stores_a_blob_and_reads_back(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("A")
    data = bytes(range(256)) * 40
    aid = await put(
        store,
        tid,
        data,
        meta={"url": "https://example.org/x", "title": "X", "w": 10, "h": 20},
        trust="untrusted",
        provenance="page",
        sourceRef="tab:1",
    )
    raw = await store.db.table("attachments").get(aid)
    assert is_blob(raw["bytes"]), type(raw["bytes"])
    assert blob_size(raw["bytes"]) == len(data) == raw["size"]
    assert raw["bytes"].type == "image/png"
    assert raw["threadId"] == tid and raw["kind"] == "image" and raw["mime"] == "image/png"
    assert raw["meta"] == {"url": "https://example.org/x", "title": "X", "w": 10, "h": 20}
    assert (raw["trust"], raw["provenance"], raw["sourceRef"]) == ("untrusted", "page", "tab:1")
    meta, back = await read_bytes(store.db, aid)
    assert back == data and "bytes" not in meta
    meta, blob = await get_blob(store.db, aid)
    assert is_blob(blob) and await blob_bytes(blob) == data
    got = await store.query("attachment.get", {"attachmentId": aid})
    assert base64.b64decode(got["dataBase64"]) == data and got["size"] == len(data)
    receipts = await store.query("receipts.list", {})
    assert receipts[0]["commandType"] == "attachment.put"


async def case_python_api_takes_bytes_or_a_blob(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("A")
    budget = store.host.storage.budget
    first = await put_within_budget(store.db, tid, "file", "text/plain", b"hello", budget=budget)
    blob = make_blob(store.db, b"from a blob", "text/plain")
    second = await put_within_budget(store.db, tid, "file", "text/plain", blob, budget=budget)
    assert (first["size"], second["size"]) == (5, 11)
    assert (await read_bytes(store.db, second["id"]))[1] == b"from a blob"
    assert (await read_bytes(store.db, first["id"]))[1] == b"hello"
    empty = await put_within_budget(
        store.db, tid, "file", "application/octet-stream", b"", budget=budget
    )
    assert (await read_bytes(store.db, empty["id"]))[1] == b""


async def case_list_by_thread_and_created_at_without_bytes(ctx: Ctx) -> None:
    store = await ctx.store()
    a, b = await store.create_thread("A"), await store.create_thread("B")
    ids = [await put(store, t, bytes([i]) * (i + 1)) for i, t in enumerate([a, b, a, b, a])]
    listed = (await store.query("attachment.list", {"threadId": a}))["attachments"]
    assert [r["id"] for r in listed] == [ids[0], ids[2], ids[4]]
    assert all("bytes" not in r for r in listed)
    everything = (await store.query("attachment.list", {}))["attachments"]
    assert [r["id"] for r in everything] == ids
    assert [r["createdAt"] for r in everything] == sorted(r["createdAt"] for r in everything)
    assert len((await store.query("attachment.list", {"limit": 2}))["attachments"]) == 2
    usage = await store.query("attachment.usage", {})
    assert usage["total"] == 1 + 2 + 3 + 4 + 5 and usage["count"] == 5


async def case_attach_records_refs_and_validates(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("A")
    aid = await put(store, tid, b"png")
    node = await store.append(tid, "user_message", image(aid))
    out = await store.command("attachment.attach", {"attachmentId": aid, "nodeId": node["nodeId"]})
    assert out["refs"] == {"nodeIds": [node["nodeId"]]}
    again = await store.command(
        "attachment.attach", {"attachmentId": aid, "nodeId": node["nodeId"], "runId": "r1"}
    )
    assert again["refs"] == {"nodeIds": [node["nodeId"]], "runIds": ["r1"]}
    with_node = await put(store, tid, b"x", nodeId=node["nodeId"])
    assert (await store.db.table("attachments").get(with_node))["refs"]["nodeIds"] == [
        node["nodeId"]
    ]
    await raises(NotFoundError, store.command("attachment.attach", {"attachmentId": "nope"}))
    await raises(
        NotFoundError, store.command("attachment.attach", {"attachmentId": aid, "nodeId": "x"})
    )
    bad: list[dict[str, Any]] = [
        {"kind": "video"},
        {"dataBase64": "***"},
        {"trust": "maybe"},
        {"meta": {"colour": "red"}},
        {"meta": {"w": "wide"}},
    ]
    for change in bad:
        payload = {"threadId": tid, "kind": "file", "mime": "a/b", "dataBase64": "", **change}
        await raises(ValidationError, store.command("attachment.put", payload))
    missing = {"threadId": "none", "kind": "file", "mime": "a/b", "dataBase64": ""}
    await raises(NotFoundError, store.command("attachment.put", missing))
    assert (await store.query("attachment.usage", {}))["count"] == 2


async def case_resolve_reads_only_images_on_the_path(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("A")
    on_path, off_path = await put(store, tid, b"on"), await put(store, tid, b"off")
    pdf = await put(store, tid, b"%PDF", kind="file", mime="application/pdf")
    first = await store.append(tid, "user_message", image(off_path))
    await store.append(
        tid,
        "user_message",
        {
            "content": [
                {"type": "image", "attachmentId": on_path},
                {"type": "file", "attachmentId": pdf, "name": "a.pdf"},
                {"type": "text", "text": "look"},
            ]
        },
        parentId=None,
    )
    assert first["nodeId"]
    resolved = (await store.query("attachment.resolve", {"threadId": tid}))["attachments"]
    assert list(resolved) == [on_path]
    assert base64.b64decode(resolved[on_path]["dataBase64"]) == b"on"
    both = await store.query("attachment.resolve", {"threadId": tid, "kinds": ["image", "file"]})
    assert set(both["attachments"]) == {on_path, pdf}
    await raises(ValidationError, store.query("attachment.resolve", {"threadId": tid, "kinds": 1}))


async def case_storage_estimate_shape(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("A")
    await put(store, tid, b"x" * 1000)
    est = await store.query("storage.estimate", {})
    assert set(est) == {"usage", "quota", "percent", "warn", "reported", "lagging"}
    assert isinstance(est["warn"], bool) and est["usage"] >= 0
    if ctx.kind == "browser":
        assert est["quota"] > 0 and 0 <= est["percent"] <= 100
    else:
        assert est["quota"] is None and est["percent"] is None and est["usage"] == 1000


async def case_text_blocks_are_unchanged_in_context(ctx: Ctx) -> None:
    store = await ctx.store()
    tid = await store.create_thread("A")
    await store.append(tid, "user_message", text("plain"))
    context = await store.context(tid)
    assert context["messages"][0]["content"] == [{"type": "text", "text": "plain"}]
