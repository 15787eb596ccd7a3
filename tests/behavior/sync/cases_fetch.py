"""``sync.fetch``: an attachment held only by the server comes here when asked.

Store A puts a file in a message and pushes; store B pulls with no room in its
attachment budget, so the attachment stays on the server (``onServer``), or A evicts
its own copy. ``sync.fetch`` then brings the bytes (checked against the server's MD5
digest), and the sync state ends consistent: a push sends nothing back and a pull
fetches nothing again. ``sync.attachment`` says where the bytes are. ``Host.http``
with ``blob`` answers a body as a Blob with its MD5 (in a page streamed chunk by chunk
from the response into a JS Blob), refusing it once it passes the limit.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from behavior import Ctx, raises
from behavior.payloads import b64, text
from behavior.sync import clear_faults, fault, pull, push, second_store, server, synced_store
from panelot.errors import NetworkError, SyncDigestError
from panelot.host import HttpRequest
from panelot.idb.blobs import blob_bytes, blob_size, is_blob
from panelot.idb.errors import NotFoundError
from panelot.store import PanelotStore

DATA = bytes(range(256)) * 8
"""The file's bytes (2,048)."""


async def _file_message(store: PanelotStore, data: bytes = DATA) -> tuple[str, str]:
    """A thread with a message carrying a file; ``(thread id, attachment id)``."""
    tid = await store.create_thread("Files")
    put = {"threadId": tid, "kind": "file", "mime": "text/plain", "dataBase64": b64(data)}
    aid = (await store.command("attachment.put", put))["attachmentId"]
    block = {"type": "file", "attachmentId": aid, "name": "notes.txt", "size": len(data)}
    payload = {"content": [*text("see attached")["content"], block]}
    await store.append(tid, "user_message", payload)
    return tid, aid


async def _pulled_without_bytes(ctx: Ctx) -> tuple[PanelotStore, PanelotStore, str, str]:
    """A pushed a file; B pulled it with no budget room: ``(a, b, thread, attachment)``."""
    a, database = await synced_store(ctx)
    b = await second_store(ctx, database)
    tid, aid = await _file_message(a)
    await push(a)
    budget = ctx.host.storage.budget
    ctx.host.storage.set_budget(100)  # no room for 2,048 bytes
    try:
        report = await pull(b)
    finally:
        ctx.host.storage.set_budget(budget)
    assert report["onServer"] == [f"attachments:{aid}"], report
    assert await b.db.table("attachments").get(aid) is None
    return a, b, tid, aid


async def _row(store: PanelotStore, aid: str) -> dict[str, Any]:
    assert store.sync is not None
    state = await store.sync.state()
    row = await state.table("docs").get(f"attachments:{aid}")
    assert isinstance(row, dict), row
    return row


async def case_an_attachment_left_on_the_server_is_fetched_on_demand_once(ctx: Ctx) -> None:
    _, b, tid, aid = await _pulled_without_bytes(ctx)
    where = await b.query("sync.attachment", {"attachmentId": aid})
    assert where == {
        "attachmentId": aid,
        "held": False,
        "onServer": True,
        "size": len(DATA),
        "mime": "text/plain",
    }, where
    got = await b.command("sync.fetch", {"attachmentId": aid})
    assert got == {
        "attachmentId": aid,
        "threadId": tid,
        "kind": "file",
        "mime": "text/plain",
        "size": len(DATA),
        "fetched": True,
    }, got
    record = await b.db.table("attachments").get(aid)
    assert record is not None and await blob_bytes(record["bytes"]) == DATA  # the same bytes
    shown = await b.query("attachment.get", {"attachmentId": aid})
    assert shown["dataBase64"] == b64(DATA), shown
    assert "onServer" not in await _row(b, aid)  # the state: held here now
    where = await b.query("sync.attachment", {"attachmentId": aid})
    assert where == {"attachmentId": aid, "held": True, "onServer": False}, where
    again = await b.command("sync.fetch", {"attachmentId": aid})
    assert again == {**got, "fetched": False}, again  # a no-op
    pushed = await push(b)
    assert pushed["pushed"] == 0 and pushed["deleted"] == 0, pushed  # nothing goes back
    pulled = await pull(b)
    assert pulled["pulled"] == 0 and pulled["written"] == 0, pulled  # nothing comes again
    assert pulled["onServer"] == [], pulled


async def case_an_attachment_evicted_here_comes_back_and_its_blocks_show_again(ctx: Ctx) -> None:
    a, _ = await synced_store(ctx)
    tid, aid = await _file_message(a)
    await push(a)
    await a.command("attachment.evict", {"budget": 0})
    assert await a.db.table("attachments").get(aid) is None
    nodes = await a.db.table("nodes").where("threadId").equals(tid).to_list()
    assert "'evicted': True" in repr(nodes), nodes  # eviction marked the block
    where = await a.query("sync.attachment", {"attachmentId": aid})
    assert where["onServer"] is True and where["held"] is False, where  # kept there
    got = await a.command("sync.fetch", {"attachmentId": aid})
    assert got["fetched"] is True and got["size"] == len(DATA), got
    record = await a.db.table("attachments").get(aid)
    assert record is not None and await blob_bytes(record["bytes"]) == DATA
    nodes = await a.db.table("nodes").where("threadId").equals(tid).to_list()
    assert "evicted" not in repr(nodes), nodes  # the eviction is undone
    pushed = await push(a)
    assert pushed["pushed"] == 0 and pushed["deleted"] == 0, pushed


async def case_bytes_that_are_not_the_digest_write_nothing(ctx: Ctx) -> None:
    _, b, _, aid = await _pulled_without_bytes(ctx)
    database = (await b.query("sync.status"))["database"]
    path = f"^GET /{database}/attachments%3A{aid}/bytes"
    await fault(ctx, path, "body", raw="x" * len(DATA))  # the length, not the bytes
    try:
        error = await raises(SyncDigestError, b.command("sync.fetch", {"attachmentId": aid}))
    finally:
        await clear_faults(ctx)
    assert "digest" in str(error), error
    assert await b.db.table("attachments").get(aid) is None  # nothing written
    assert (await _row(b, aid)).get("onServer") is True  # still on the server
    await fault(ctx, path, "drop", times=5)  # Chromium retries a dropped GET
    try:
        await raises(NetworkError, b.command("sync.fetch", {"attachmentId": aid}))
    finally:
        await clear_faults(ctx)
    assert await b.db.table("attachments").get(aid) is None
    got = await b.command("sync.fetch", {"attachmentId": aid})  # the server answers again
    assert got["fetched"] is True, got
    record = await b.db.table("attachments").get(aid)
    assert record is not None and await blob_bytes(record["bytes"]) == DATA


async def case_not_configured_and_unknown_attachments_are_refused_by_name(ctx: Ctx) -> None:
    lone = await ctx.store()
    assert lone.sync is not None
    ctx.names.append(lone.sync.state_name)
    error = await raises(NotFoundError, lone.command("sync.fetch", {"attachmentId": "a1"}))
    assert "not configured" in str(error), error
    where = await lone.query("sync.attachment", {"attachmentId": "a1"})
    assert where == {"attachmentId": "a1", "held": False, "onServer": False}, where
    a, _ = await synced_store(ctx)
    error = await raises(NotFoundError, a.command("sync.fetch", {"attachmentId": "nowhere"}))
    assert "'nowhere' is known" in str(error), error
    tid, aid = await _file_message(a)  # here, never pushed: nothing to fetch
    got = await a.command("sync.fetch", {"attachmentId": aid})
    assert got["fetched"] is False and got["threadId"] == tid, got


async def case_a_fetch_racing_a_pull_writes_the_attachment_once(ctx: Ctx) -> None:
    a, b, _, aid = await _pulled_without_bytes(ctx)
    await a.command(
        "thread.update",
        {"threadId": (await _row(b, aid))["threadId"], "patch": {"title": "Renamed"}},
    )
    await push(a)
    got, pulled = await asyncio.gather(b.command("sync.fetch", {"attachmentId": aid}), pull(b))
    assert got["fetched"] is True and pulled["refused"] == [], (got, pulled)
    record = await b.db.table("attachments").get(aid)
    assert record is not None and await blob_bytes(record["bytes"]) == DATA
    assert "onServer" not in await _row(b, aid)
    assert (await push(b))["pushed"] == 0
    later = await pull(b)
    assert later["written"] == 0 and later["onServer"] == [], later


async def case_host_http_streams_a_body_into_a_blob_with_its_md5(ctx: Ctx) -> None:
    a, database = await synced_store(ctx)
    _, aid = await _file_message(a)
    await push(a)
    url = f"{server()}/{database}/attachments%3A{aid}/bytes"
    got = await ctx.host.http(HttpRequest("GET", url, blob="text/plain"))
    assert got.status == 200 and got.body == b"", got.status  # no bytes: a Blob
    assert is_blob(got.blob) and blob_size(got.blob) == len(DATA)
    assert got.md5 == hashlib.md5(DATA, usedforsecurity=False).digest()
    assert await blob_bytes(got.blob) == DATA
    error = await raises(
        NetworkError, ctx.host.http(HttpRequest("GET", url, limit=100, blob="x/y"))
    )
    assert "over its limit" in str(error), error  # refused as soon as it passed the limit
    missing = await ctx.host.http(HttpRequest("GET", url + "-not", blob="text/plain"))
    assert missing.status == 404 and missing.blob is None and missing.body, missing.status


async def case_an_attachment_whose_thread_is_gone_here_is_not_fetched(ctx: Ctx) -> None:
    _, b, tid, aid = await _pulled_without_bytes(ctx)
    await b.command("thread.delete", {"threadId": tid})  # not pushed yet: the row stays
    error = await raises(NotFoundError, b.command("sync.fetch", {"attachmentId": aid}))
    assert f"its thread {tid!r} is not here" in str(error), error
    assert await b.db.table("attachments").get(aid) is None
