"""``legacy.import``: sessions keep their dates, and every image with bytes keeps them."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

from behavior import Ctx
from behavior.legacy.browsa_fixture import (
    DATES,
    DAY_MS,
    UNDATED,
    WITH_BYTES,
    dated_storage,
    image_parts,
)
from panelot.attachments.records import read_bytes
from panelot.settings import MemoryStorageBackend
from panelot.settings.credentials import MemoryKeyStore

IMPORTED_AT = 1_800_000_000_000
"""The case's clock at the import: later than every session's date."""


async def _imported(ctx: Ctx, layout: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    backend = MemoryStorageBackend()
    await backend.set(copy.deepcopy(layout))
    host = ctx.host.with_settings(backend, MemoryKeyStore())
    store = await ctx.store(host)
    ctx.now = IMPORTED_AT
    return store, await store.command("legacy.import", {}, "dated")


async def case_legacy_sessions_keep_their_dates_and_list_order(ctx: Ctx) -> None:
    store, out = await _imported(ctx, dated_storage())
    sessions = out["threadIds"]["sessions"]
    listed = await store.query("thread.list")
    by_id = {t["id"]: t for t in listed}
    # a dated session: updatedAt and createdAt are its date, as is every node's ts
    for sid, when in DATES.items():
        thread = by_id[sessions[sid]]
        assert (thread["createdAt"], thread["updatedAt"]) == (when, when), (sid, thread)
        nodes = (await store.query("thread.export", {"threadId": sessions[sid]}))["data"]["nodes"]
        assert nodes and {n["ts"] for n in nodes} == {when}, (sid, nodes)
    # the list: newest first, by the sessions' dates, not by the index's order
    dated = [t["id"] for t in listed if t["id"] in {sessions[s] for s in DATES}]
    assert dated == [sessions[s] for s in ("s-new", "s-mid", "s-old", "s-images")]
    # no usable date (missing, a string, negative), and the global history (it has none):
    # the import time, above every dated session
    undated = [sessions[s] for s in UNDATED] + [out["threadIds"]["history"]]
    for tid in undated:
        assert by_id[tid]["updatedAt"] == by_id[tid]["createdAt"] >= IMPORTED_AT, by_id[tid]
    assert {t["id"] for t in listed[: len(undated)]} == set(undated)
    # retention sees their age: 30 days archives every dated session and nothing else
    archived = await store.command("thread.archive_old", {"days": 30})
    assert {a["threadId"] for a in archived["archived"]} == {sessions[s] for s in DATES}
    assert ctx.now - 30 * DAY_MS > max(DATES.values())


async def _sha(store: Any, attachment_id: str) -> str:
    _, data = await read_bytes(store.db, attachment_id)
    return hashlib.sha256(data).hexdigest()


async def case_legacy_images_in_every_base64_form_keep_their_bytes(ctx: Ctx) -> None:
    layout = {
        "savedSessions": [{"id": "pics", "name": "Pictures", "createdAt": DATES["s-images"]}],
        "session_pics": {"history": [{"role": "user", "content": image_parts()}]},
    }
    store, out = await _imported(ctx, layout)
    assert (out["images"], out["imagesWithoutBytes"], out["externalImages"]) == (5, 5, 1), out
    tid = out["threadIds"]["sessions"]["pics"]
    [node] = (await store.query("thread.export", {"threadId": tid}))["data"]["nodes"]
    blocks = node["payload"]["content"]
    assert [b["type"] for b in blocks] == ["text", *["image"] * 10, "text"]
    with_bytes, without = blocks[1:6], blocks[6:11]
    got = [await _sha(store, b["attachmentId"]) for b in with_bytes]
    assert got == [hashlib.sha256(x).hexdigest() for x in WITH_BYTES]
    assert [b["mime"] for b in with_bytes] == ["image/png", "image/png", "image/jpeg"] + [
        "image/png",
        "image/jpeg",
    ]
    # no bytes: an evicted image block (the MIME type when the URL gave one), never text
    for b in without:
        assert b["attachmentId"] == "" and b["evicted"] is True, b
    assert [b.get("mime") for b in without] == ["image/png", "image/png", "image/gif", None, None]
    assert blocks[-1] == {"type": "text", "text": "[Image: https://img.test/cat.png]"}
    assert not any("data:" in b.get("text", "") for b in blocks)
    listed = await store.query("attachment.list", {"threadId": tid})
    assert len(listed["attachments"]) == 5
    # a second run skips the thread and counts nothing of it
    again = await store.command("legacy.import", {}, "again")
    assert (again["skippedThreads"], again["images"], again["imagesWithoutBytes"]) == (1, 0, 0)
